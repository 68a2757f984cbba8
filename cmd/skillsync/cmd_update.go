package main

import (
	"context"

	"github.com/spf13/cobra"
)

type updateOptions struct {
	sources []string
	sync    syncOptions
}

func newUpdateCommand(a *app, runF func(context.Context, *updateOptions) error) *cobra.Command {
	opts := &updateOptions{}
	cmd := &cobra.Command{
		Use:   "update [SOURCE...]",
		Short: "Move the lock to the newest revisions and sync",
		Long: `Sync with the named sources moved to their newest revisions and the others
kept at the revisions in skillsync.lock. With no SOURCE every source moves.`,
		Example: `  skillsync update team
  skillsync update`,
		Annotations: map[string]string{bigHeap: "yes"},
		RunE: func(c *cobra.Command, sources []string) error {
			opts.sources = sources
			return pick(runF, a.runUpdate)(c.Context(), opts)
		},
	}
	addSyncFlags(cmd, &opts.sync)
	return cmd
}

func (a *app) runUpdate(ctx context.Context, opts *updateOptions) error {
	so := opts.sync.engineOptions()
	if len(opts.sources) > 0 {
		so.Locked, so.Move = true, opts.sources
	}
	return a.sync(ctx, so)
}
