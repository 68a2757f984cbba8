package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type restoreOptions struct {
	name   string
	source string
}

func newRestoreCommand(a *app, runF func(context.Context, *restoreOptions) error) *cobra.Command {
	opts := &restoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore NAME",
		Short: "Make an archived skill active again",
		Long: `Make an archived skill active again. A local skill's newest archived copy
moves back to its layer directory (refused, with the reason, when a skill of
that name now stands there); a marketplace skill is materialized again at
once.

--source NAME brings back a skill that curate --source NAME --fleet retired
from a postgres source, in one transaction, and syncs that source. (A git
source's retirement is a commit: revert it.)`,
		Example: `  skillsync restore release-notes
  skillsync restore --source team release-notes`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			opts.name = names[0]
			return pick(runF, a.runRestore)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.source, "source", "", "bring the skill back into this postgres source, upstream")
	return cmd
}

func (a *app) runRestore(ctx context.Context, opts *restoreOptions) error {
	eng, err := a.writeEngine()
	if err != nil {
		return err
	}
	if opts.source != "" {
		rev, err := eng.RestoreSource(ctx, opts.source, opts.name)
		if err != nil {
			return err
		}
		if a.json {
			return writeJSON(a.stdout, map[string]string{"name": opts.name, "source": opts.source, "revision": rev, "state": "active"})
		}
		fmt.Fprintf(a.stdout, "restored %s in source %s (revision %s)\n", safe(opts.name), safe(opts.source), safe(rev))
		return nil
	}
	name, err := eng.Restore(ctx, opts.name)
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, map[string]string{"name": name, "state": "active"})
	}
	fmt.Fprintf(a.stdout, "restored %s\n", safe(name))
	return nil
}
