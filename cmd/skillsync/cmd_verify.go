package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/materialize"
)

type verifyOptions struct {
	repair bool
	sync   syncOptions
}

func (a *app) verifyCommand() *cobra.Command {
	var opts verifyOptions
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Hash the cache and targets again and compare them with the records",
		Long: `Hash every file of the cache and the targets again and compare them with
the manifest, the targets' records and skillsync.lock. Modified, missing and
extra files are listed; the exit status is 1 when there is any.

--repair rewrites what differs, at the locked revisions, then verifies again.`,
		Example: `  skillsync verify
  skillsync verify --repair --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runVerify(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.repair, "repair", false, "rewrite whatever differs")
	addSyncFlags(cmd, &opts.sync)
	return cmd
}

type verifyJSON struct {
	Differences []materialize.Difference `json:"differences"`
	Repaired    []materialize.Difference `json:"repaired"`
}

func (a *app) runVerify(ctx context.Context, opts verifyOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	diffs, err := eng.Verify(ctx)
	if err != nil {
		return err
	}
	out := verifyJSON{Differences: orEmpty(diffs), Repaired: []materialize.Difference{}}
	if opts.repair && len(diffs) > 0 {
		report, err := eng.Repair(ctx, skillsync.SyncOptions{Wait: opts.sync.wait, Jobs: opts.sync.jobs})
		if err != nil {
			return syncError(err)
		}
		for _, w := range report.Warnings {
			a.warn("%s", w)
		}
		out.Repaired = out.Differences
		if out.Differences, err = eng.Verify(ctx); err != nil {
			return err
		}
		out.Differences = orEmpty(out.Differences)
	}
	if a.json {
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
	} else {
		for _, d := range out.Repaired {
			fmt.Fprintf(a.stdout, "repaired %s %s\n", d.Kind, d.Path)
		}
		for _, d := range out.Differences {
			fmt.Fprintf(a.stdout, "%s %s\n", d.Kind, d.Path)
		}
		if len(out.Differences) == 0 && !a.quiet {
			fmt.Fprintln(a.stderr, "verify: the cache and the targets match their records")
		}
	}
	if len(out.Differences) > 0 {
		return &exitError{code: exitFailure}
	}
	return nil
}
