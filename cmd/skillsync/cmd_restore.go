package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type restoreOptions struct {
	name string
}

func newRestoreCommand(a *app, runF func(context.Context, *restoreOptions) error) *cobra.Command {
	opts := &restoreOptions{}
	return &cobra.Command{
		Use:   "restore NAME",
		Short: "Make an archived skill active again",
		Long: `Make an archived skill active again. A local skill's newest archived copy
moves back to its layer directory (refused, with the reason, when a skill of
that name now stands there); a marketplace skill is materialized again at
once.`,
		Example: `  skillsync restore release-notes`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			opts.name = names[0]
			return pick(runF, a.runRestore)(c.Context(), opts)
		},
	}
}

func (a *app) runRestore(ctx context.Context, opts *restoreOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
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
