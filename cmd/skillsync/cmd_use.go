package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type useOptions struct {
	name string
	view bool
}

func newUseCommand(a *app, runF func(context.Context, *useOptions) error) *cobra.Command {
	opts := &useOptions{}
	cmd := &cobra.Command{
		Use:   "use NAME",
		Short: "Record that a skill was used (or, with --view, looked at)",
		Long: `Record a use of a catalog skill at the current time, or with --view a view:
an agent opened the skill to decide whether it fits. Curation counts idle
time from the last use or view. Call it from an agent's hook after a skill
helped. An unknown name exits 1 and suggests the nearest names; a hidden
skill is refused.`,
		Example: `  skillsync use release-notes
  skillsync use --view pdf`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			opts.name = names[0]
			return pick(runF, a.runUse)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.view, "view", false, "record a view instead of a use")
	return cmd
}

func (a *app) runUse(ctx context.Context, opts *useOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	recorded, err := eng.Use(ctx, opts.name, opts.view)
	if err != nil {
		return err
	}
	kind := map[bool]string{true: "view", false: "use"}[opts.view]
	if a.json {
		return writeJSON(a.stdout, map[string]string{"name": recorded, "recorded": kind})
	}
	if !a.quiet {
		fmt.Fprintf(a.stderr, "recorded a %s of %s\n", kind, safe(recorded))
	}
	return nil
}
