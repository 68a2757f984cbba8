package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
)

type removeOptions struct {
	source string
	skill  string
	noSync bool
}

func newRemoveCommand(a *app, runF func(context.Context, *removeOptions) error) *cobra.Command {
	opts := &removeOptions{}
	cmd := &cobra.Command{
		Use:     "remove SOURCE",
		Aliases: []string{"rm"},
		Short:   "Remove a repository (or one of its skills) from skillsync.yaml and sync",
		Long: `Remove the repository SOURCE from the repositories: of skillsync.yaml and
sync: the cleanup after the sync removes its skills from the cache and from
every target. SOURCE is the source's name, or any form skillsync add takes
(owner/repo, a URL, a directory) when that names one source only.

With --skill NAME the source stays and NAME leaves its skills: selection.

Only what skillsync wrote goes: a folder in a target that skillsync did not
put there is never touched. The file is edited in place: comments, blank lines
and order stay as they are.`,
		Example: `  skillsync remove team
  skillsync remove acme/team-skills
  skillsync remove team --skill release-notes
  skillsync remove team --no-sync --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.source = argv[0]
			return pick(runF, a.runRemove)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.skill, "skill", "s", "", "remove only this skill from the source's skills: list")
	cmd.Flags().BoolVar(&opts.noSync, "no-sync", false, "edit the config only; run skillsync sync later")
	return cmd
}

// removeJSON is remove's --json output.
type removeJSON struct {
	Config string          `json:"config"`
	Source string          `json:"source"`
	Skill  string          `json:"skill,omitempty"`
	Sync   *syncReportJSON `json:"sync"`
}

func (a *app) runRemove(ctx context.Context, opts *removeOptions) error {
	shown, file, err := a.configFile()
	if err != nil {
		return err
	}
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return usageError("no config at %s: there is nothing to remove", shown)
	}
	cfg, err := config.LoadIn(a.env, file, skillsync.Kinds())
	if err != nil {
		return err
	}
	name, err := a.sourceNamed(cfg, opts.source)
	finishing := err != nil && opts.skill == "" && !opts.noSync && a.cachedSource(cfg, opts.source)
	if err != nil && !finishing {
		return err
	}
	if finishing {
		// A remove whose sync did not run (another sync held the cache, a
		// kill): the config has lost the source, the cache has not. Its
		// sync finishes the job.
		name = opts.source
	}
	out := removeJSON{Config: shown, Source: name, Skill: opts.skill}
	left := len(cfg.Sources) - 1
	if finishing {
		left = len(cfg.Sources)
		if !a.json {
			fmt.Fprintf(a.stdout, "%s has no source %s; its skills are still in the cache, and this sync takes them out\n", shown, safe(name))
		}
	} else if opts.skill != "" {
		if err := a.checkCachedSkill(cfg, name, opts.skill); err != nil {
			return err
		}
		if _, err := config.RemoveSkill(a.env, file, name, opts.skill, skillsync.Kinds()); err != nil {
			return err
		}
		left = len(cfg.Sources)
	} else if _, _, err := config.RemoveRepository(a.env, file, name, skillsync.Kinds()); err != nil {
		return err
	}
	if !a.json && !finishing {
		if opts.skill != "" {
			fmt.Fprintf(a.stdout, "%s: source %s no longer takes %s\n", shown, name, safe(opts.skill))
		} else {
			fmt.Fprintf(a.stdout, "%s: removed source %s\n", shown, name)
		}
	}
	if opts.noSync {
		if a.json {
			return writeJSON(a.stdout, out)
		}
		fmt.Fprintln(a.stdout, "run skillsync sync to remove its skills from the cache and the targets")
		return nil
	}
	report, stopped, err := a.syncAfterEdit(ctx, left == 0)
	out.Sync = syncReportOf(report, err)
	if a.json && out.Sync != nil {
		if werr := writeJSON(a.stdout, out); werr != nil {
			return werr
		}
	}
	if stopped {
		what := "source " + name + ", whose skills stay"
		if opts.skill != "" {
			what = "skill " + safe(opts.skill) + " of source " + name + ", which stays"
		}
		return fmt.Errorf("%w; %s no longer has %s in the cache and the targets until a sync: run skillsync sync", err, shown, what)
	}
	return err
}

// cachedSource reports whether the workspace's cache still holds a
// source named name that cfg no longer has.
func (a *app) cachedSource(cfg *config.Config, name string) bool {
	m, err := materialize.ReadSkills(cfg.Layout().CacheDir())
	return err == nil && m.Sources[name] != nil
}

// sourceNamed finds the one source arg names: by name, else by what it
// points to (an empty ref or path in arg matches any).
func (a *app) sourceNamed(cfg *config.Config, arg string) (string, error) {
	var names []string
	for _, s := range cfg.Sources {
		if s.Name == arg {
			return s.Name, nil
		}
		names = append(names, s.Name)
	}
	has := "it has none"
	if len(names) > 0 {
		has = "it has: " + strings.Join(names, ", ")
	}
	notFound := usageError("no source %s in %s (%s)", arg, cfg.File, has)
	host, err := config.GitHost(a.env, cfg.DefaultGitHost)
	if err != nil {
		return "", err
	}
	e, err := config.ParseSource(a.env, arg, host)
	if err != nil {
		return "", notFound
	}
	found := cfg.Match(e, false)
	switch len(found) {
	case 0:
		return "", notFound
	case 1:
		return cfg.Sources[found[0]].Name, nil
	}
	var matched []string
	for _, i := range found {
		matched = append(matched, cfg.Sources[i].Name)
	}
	return "", usageError("%s names %d sources (%s): give the name of one", arg, len(found), strings.Join(matched, ", "))
}

// checkCachedSkill refuses a --skill that names none of the skills the
// cache holds of the source (nor, as a glob, matches one), naming the
// nearest: a typo would be written to exclude: and leave the skill. A
// source the cache does not hold, or a name its skills: lists, is not
// checked.
func (a *app) checkCachedSkill(cfg *config.Config, source, skill string) error {
	for _, s := range cfg.Sources {
		if s.Name == source && slices.Contains(s.Skills, skill) {
			return nil
		}
	}
	m, err := materialize.ReadSkills(cfg.Layout().CacheDir())
	if err != nil || m.Sources[source] == nil || len(m.Sources[source].Skills) == 0 {
		return nil
	}
	names := make([]string, 0, len(m.Sources[source].Skills))
	for have := range m.Sources[source].Skills {
		if ok, _ := path.Match(skill, have); ok || have == skill {
			return nil
		}
		names = append(names, have)
	}
	msg := fmt.Sprintf("source %s has no skill %s in the cache (it has %d); nothing was changed", source, safe(skill), len(names))
	if near := layering.NearestNames(names, skill, 3); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, ", ") + "?"
	}
	return usageError("%s", msg)
}
