package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type curateOptions struct {
	dryRun bool
	now    string
	force  bool
}

func newCurateCommand(a *app, runF func(context.Context, *curateOptions) error) *cobra.Command {
	opts := &curateOptions{}
	cmd := &cobra.Command{
		Use:   "curate",
		Short: "Mark idle skills stale, archive long-idle ones, reactivate used ones",
		Long: `Curate the catalog from the usage record (skills/.usage.json):

  active -> stale       idle for curator.stale_after (default 720h)
  any    -> archived    idle for curator.archive_after (default 2160h)
  stale  -> active      used or viewed since it became stale

Idle time runs from the latest use, view or first sighting. Pinned skills
never change. A local skill is archived by moving it to
<layer dir>/.archive/<name>-<UTC stamp>/; a marketplace skill leaves the cache
and the targets. skillsync restore undoes either. Nothing changes while any
skill was used within curator.min_idle, unless --force.`,
		Example: `  skillsync curate --dry-run
  skillsync curate --now 2027-03-01T00:00:00Z --dry-run
  skillsync curate --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runCurate)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the plan and change nothing")
	cmd.Flags().StringVar(&opts.now, "now", "", "judge idle time at this RFC3339 time instead of now")
	cmd.Flags().BoolVar(&opts.force, "force", false, "curate even when a skill was used within min_idle")
	return cmd
}

func (a *app) runCurate(ctx context.Context, opts *curateOptions) error {
	co := skillsync.CurateOptions{DryRun: opts.dryRun, Force: opts.force}
	if opts.now != "" {
		t, err := time.Parse(time.RFC3339, opts.now)
		if err != nil {
			return usageError("--now %q: want an RFC3339 time such as 2027-03-01T00:00:00Z", opts.now)
		}
		co.Now = t
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	plan, err := eng.Curate(ctx, co)
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, plan)
	}
	if plan.Skipped != "" {
		fmt.Fprintln(a.stdout, "curation skipped: "+plan.Skipped)
		return nil
	}
	verb := "changed"
	if opts.dryRun {
		verb = "would change"
	}
	for _, c := range plan.Changes {
		fmt.Fprintf(a.stdout, "%s: %s -> %s (%s)\n", safe(c.Name), c.From, c.To, safe(c.Reason))
	}
	fmt.Fprintf(a.stdout, "checked %s, %s %d\n", plural(plan.Checked, "skill"), verb, len(plan.Changes))
	if plan.ArchiveHeld != "" {
		fmt.Fprintf(a.stderr, "nothing archived: %s\n", plan.ArchiveHeld)
	}
	return nil
}
