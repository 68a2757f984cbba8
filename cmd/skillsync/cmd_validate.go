package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

type validateOptions struct {
	paths  []string
	strict bool
}

func newValidateCommand(a *app, runF func(context.Context, *validateOptions) error) *cobra.Command {
	opts := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check skills against the Agent Skills rules",
		Long: `Check skills against the Agent Skills rules.

PATH is a skill directory, a SKILL.md, or a directory of skills (searched
four levels deep). Each problem is printed as FILE:LINE: LEVEL: MESSAGE (RULE).
Errors make a skill unusable; warnings are kept unless --strict is given.
A folder is read as sync reads it: what git ignores there (a .env,
node_modules/), or outside a work tree what its own .gitignore files name,
is never synced, so it is neither counted nor checked. A folder git ignores
as a whole is checked, with a gitignored-folder warning that fails nothing.
A folder below a layer's or a dir: source's folder is read as the sync of
that source reads it, the .gitignore files above it applied; one they leave
out whole is checked, with a gitignored-skill warning: no sync takes it.

Exit status is 0 when no skill has an error (with --strict, no warning
either), else 1; a PATH that holds no SKILL.md at all, or cannot be read, is
an error too (rule path-unusable), and the other paths are checked all the
same.`,
		Example: `  skillsync validate skills/
  skillsync validate --strict skills/release-notes/SKILL.md
  skillsync validate --json skills/ | jq '.[] | select(.valid | not)'`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, paths []string) error {
			opts.paths = paths
			return pick(runF, a.runValidate)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "treat warnings as errors")
	return cmd
}

// validateResult is one skill in validate's JSON.
type validateResult struct {
	Path     string            `json:"path"`
	Name     string            `json:"name"`
	Valid    bool              `json:"valid"`
	Problems []validateProblem `json:"problems"`
}

type validateProblem struct {
	Level   skill.Level `json:"level"`
	Rule    string      `json:"rule"`
	Message string      `json:"message"`
	File    string      `json:"file"`
	Line    int         `json:"line,omitempty"`
}

func (a *app) runValidate(ctx context.Context, opts *validateOptions) error {
	var results []validateResult
	tops := a.localFolders()
	for _, p := range opts.paths {
		abs, err := a.abs(p)
		if err != nil {
			return err
		}
		// Read as a sync reads the folder (of the source that holds it,
		// when one does): what git ignores there is never synced, so it
		// is neither counted nor checked.
		checked, err := repository.ValidateUnder(ctx, abs, tops, opts.strict, a.env)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// A path that cannot be checked (missing, holding no skill) is
			// one result that is not valid; the other paths are checked.
			results = append(results, validateResult{Path: p, Problems: []validateProblem{
				{Level: skill.Error, Rule: "path-unusable", Message: err.Error(), File: p}}})
			continue
		}
		for _, c := range checked {
			// Said as the user gave the path: relative stays relative.
			c.Path = a.shown(p, c.Path)
			for i := range c.Problems {
				c.Problems[i].File = a.shown(p, c.Problems[i].File)
			}
			results = append(results, newValidateResult(c))
		}
	}
	failed := 0
	for _, r := range results {
		if !r.Valid {
			failed++
		}
	}
	if a.json {
		if err := writeJSON(a.stdout, orEmpty(results)); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			for _, p := range r.Problems {
				loc := p.File
				if p.Line > 0 {
					loc = fmt.Sprintf("%s:%d", loc, p.Line)
				}
				fmt.Fprintf(a.stdout, "%s: %s: %s (%s)\n", safe(loc), p.Level, safe(p.Message), p.Rule)
			}
		}
		fmt.Fprintf(a.stderr, "%s checked, %d not valid\n", plural(len(results), "skill"), failed)
	}
	if failed > 0 {
		return reported(errInvalid)
	}
	return nil
}

func newValidateResult(c skillsync.Checked) validateResult {
	r := validateResult{Path: c.Path, Name: c.Name, Valid: c.Valid, Problems: []validateProblem{}}
	for _, p := range c.Problems {
		r.Problems = append(r.Problems, validateProblem{Level: p.Level, Rule: p.Rule, Message: p.Message, Line: p.Line, File: p.File})
	}
	return r
}

// localFolders are the folders the workspace's local sources read: its
// layers' and its dir: sources'. A folder validate is given below one is
// read as the sync of that source reads it, its .gitignore files above
// the folder applied, and a skill folder they leave out is said to be.
// Without a config that loads, each folder is read as one of its own.
func (a *app) localFolders() []string {
	cfg, err := config.FindIn(a.env, a.configPath, skillsync.Kinds())
	if err != nil {
		a.warn("%v; each PATH is read as a folder of its own, not as the sync of a source that holds it reads it", err)
		return nil
	}
	l := cfg.Layout()
	return append([]string{l.SkillsDir(), l.UserSkillsDir(), cfg.Global}, cfg.LocalDirs()...)
}
