package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/drafts"
)

type proposeOptions struct {
	dir  string
	name string
}

func newProposeCommand(a *app, runF func(context.Context, *proposeOptions) error) *cobra.Command {
	opts := &proposeOptions{}
	cmd := &cobra.Command{
		Use:   "propose DIR",
		Short: "Copy a skill directory into the drafts, to wait for a promotion",
		Long: `Copy the skill directory DIR into skills/_drafts/NAME/, where it waits for a
person to promote it (skillsync promote) or reject it (skillsync reject).
Drafts are never in the catalog, the prompt, the targets, the MCP server's
list or the cache.

NAME is --name, else the name in DIR's SKILL.md, else DIR's own name. The
copy holds regular files only: a symbolic link to a file inside DIR is
copied as that file; a link out of DIR, a link to a directory, a FIFO,
socket or device, or a file over max_file_size refuses the whole proposal.
A draft with validation problems is kept, and listed with them by
skillsync drafts. The proposal is a line of the audit log. DIR is copied
as sync reads it: what git ignores there (a .env, node_modules/), or
outside a work tree what DIR's own .gitignore files name, is left out of
the draft, and a note on stderr names it. A DIR git ignores as a whole is
copied with a warning naming the rule.

With promotion.auto: true in the config, a draft without any problem is
promoted at once to the first of promotion.targets (the workspace when
that is not set).`,
		Example: `  skillsync propose ./my-new-skill
  skillsync propose /tmp/agent-output/pdf --name pdf-forms`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.dir = argv[0]
			return pick(runF, a.runPropose)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.name, "name", "", "the draft's name (default: the name in SKILL.md)")
	return cmd
}

func (a *app) runPropose(ctx context.Context, opts *proposeOptions) error {
	eng, err := a.writeEngine()
	if err != nil {
		return err
	}
	dir, err := a.abs(opts.dir)
	if err != nil {
		return err
	}
	p, err := eng.Gate().Propose(ctx, dir, drafts.ProposeOptions{Name: opts.name})
	if err != nil {
		return err
	}
	a.noteIgnored("proposed "+p.Draft.Name, p.Ignored)
	if a.json {
		return writeJSON(a.stdout, p)
	}
	status := "no problem"
	if n := len(p.Draft.Problems); n > 0 {
		status = plural(n, "problem") + "; fix them before it can be promoted"
	}
	fmt.Fprintf(a.stdout, "proposed %s in %s (%s)\n", safe(p.Draft.Name), safe(p.Draft.Dir), status)
	a.reportProblems(p.Draft.Problems)
	if p.Promotion != nil {
		printPromotion(a, p.Promotion, true)
	}
	if p.AutoError != "" {
		a.warn("promotion.auto did not promote it: %s", safe(p.AutoError))
	}
	return nil
}
