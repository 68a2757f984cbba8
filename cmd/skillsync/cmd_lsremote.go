package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/termtext"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

type lsRemoteOptions struct {
	source string
	ref    string
	path   string
}

func newLsRemoteCommand(a *app, runF func(context.Context, *lsRemoteOptions) error) *cobra.Command {
	opts := &lsRemoteOptions{}
	cmd := &cobra.Command{
		Use:   "ls-remote SOURCE",
		Short: "List the skills a repository offers, changing nothing",
		Long: `List the skills SOURCE offers before adding it: name, description, and the
folder each lives in, and on stderr every problem found (a skill with an error
would be skipped). SOURCE takes every form skillsync add takes.

A git repository is fetched into the machine's git store
($XDG_CACHE_HOME/skillsync/git, shared by every workspace, so a later
skillsync add downloads nothing again). The workspace is not touched: the
config, the cache and skillsync.lock stay as they are.`,
		Example: `  skillsync ls-remote anthropics/skills
  skillsync ls-remote acme/team-skills@v2 --json | jq -r '.skills[].name'
  skillsync ls-remote https://github.com/acme/skills/tree/main/skills/release-notes
  skillsync ls-remote ../shared-skills`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.source = argv[0]
			return pick(runF, a.lsRemote)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.ref, "ref", "", "branch, tag or commit to look at (default: the remote's default branch)")
	cmd.Flags().StringVar(&opts.path, "path", "", "folder of skills inside the repository")
	return cmd
}

// lsRemoteJSON is ls-remote's --json output.
type lsRemoteJSON struct {
	Source   string          `json:"source"`
	Git      string          `json:"git,omitempty"`
	Dir      string          `json:"dir,omitempty"`
	Ref      string          `json:"ref"`
	Path     string          `json:"path"`
	Revision string          `json:"revision"`
	Skills   []offeredSkill  `json:"skills"`
	Problems []skill.Problem `json:"problems"`
}

type offeredSkill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"`
}

func (a *app) lsRemote(ctx context.Context, opts *lsRemoteOptions) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	entry, err := a.parseSource(opts.source, cfg.DefaultGitHost, opts.ref, opts.path)
	if err != nil {
		return err
	}
	wd, err := a.env.Getwd()
	if err != nil {
		return err
	}
	src, err := entry.Source(wd, skillsync.Kinds())
	if err != nil {
		return err
	}
	offer, err := a.preview(ctx, cfg, src)
	if err != nil {
		return err
	}
	out := lsRemoteJSON{Source: offer.Source, Git: repository.RedactURL(entry.Git), Ref: entry.Ref, Path: entry.Path, Revision: offer.Revision,
		Skills: []offeredSkill{}, Problems: orEmpty(offer.Problems)}
	if d, ok := src.Settings.(config.Directory); ok {
		out.Dir = filepath.Clean(d.Directory())
	}
	for _, s := range offer.Skills {
		out.Skills = append(out.Skills, offeredSkill{Name: s.Name, Description: s.Description, Path: s.Path})
	}
	if a.json {
		return writeJSON(a.stdout, out)
	}
	a.reportProblems(offer.Problems)
	if len(out.Skills) == 0 {
		fmt.Fprintf(a.stderr, "%s at %s offers no skill\n", safe(describeEntry(entry)), shortRev(offer.Revision))
		return nil
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "NAME\tPATH\tDESCRIPTION")
	for _, s := range out.Skills {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", safe(s.Name), safe(s.Path), safe(firstLine(s.Description, 80)))
	}
	tw.Flush()
	fmt.Fprintf(a.stderr, "%s at %s: %s; add them with skillsync add %s (--skill NAME for some)\n",
		safe(describeEntry(entry)), shortRev(offer.Revision), plural(len(out.Skills), "skill"), safe(termtext.ShellArg(opts.source)))
	return nil
}

// firstLine is the first line of s, cut to n characters.
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if cut {
		return s + " …"
	}
	return s
}

// preview reads what src offers, with the progress line while it fetches:
// what ls-remote lists and what add checks before it writes.
func (a *app) preview(ctx context.Context, cfg *config.Config, src config.Source) (*skillsync.Offer, error) {
	progress := a.progress()
	defer progress.clear()
	eng := a.engineOver(cfg, progress.option()...)
	return eng.Preview(ctx, src)
}
