package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/fleet"
)

type curateOptions struct {
	dryRun   bool
	now      string
	force    bool
	source   string
	fleet    bool
	noImport bool
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

First the agents' records are imported (as skillsync usage import does; not
in a dry run, nor with --no-import), so a skill used since the last import is
not taken for idle. Idle time runs from the latest use, view or first
sighting. Pinned skills
never change. A local skill is archived by moving it to
<layer dir>/.archive/<name>-<UTC stamp>/; a marketplace skill leaves the cache
and the targets. skillsync restore undoes either. Nothing changes while any
skill was used within curator.min_idle, unless --force.

With fleet: in the config, a marketplace skill is judged by its last use on
any host, and curation waits while fewer than curator.min_hosts hosts
reported within stale_after.

--source NAME --fleet is the team's scheduled job: the source's skills idle
on every host past archive_after, and pinned nowhere, are retired upstream.
For a git source one commit moves them into .archive/ (which discovery never
reads), with each one's last use and host count in the message, pushed to
the branch skillsync/curate-YYYY-MM-DD (to the tracked branch with publish:
direct); reverting it brings them back. --dry-run prints the plan.`,
		Example: `  skillsync curate --dry-run
  skillsync curate --now 2027-03-01T00:00:00Z --dry-run
  skillsync curate --json
  skillsync curate --source team --fleet --dry-run`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runCurate)(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the plan and change nothing")
	cmd.Flags().StringVar(&opts.now, "now", "", "judge idle time at this RFC3339 time instead of now")
	cmd.Flags().BoolVar(&opts.force, "force", false, "curate even when a skill was used within curator.min_idle")
	cmd.Flags().StringVar(&opts.source, "source", "", "with --fleet, retire this marketplace source's fleet-idle skills upstream")
	cmd.Flags().BoolVar(&opts.fleet, "fleet", false, "with --source, decide on the whole fleet's usage (see docs/fleet.md)")
	cmd.Flags().BoolVar(&opts.noImport, "no-import", false, "curate without importing the agents' records first")
	return cmd
}

func (a *app) runCurate(ctx context.Context, opts *curateOptions) error {
	if (opts.source != "") != opts.fleet {
		return usageError("--source and --fleet go together: curate --source NAME --fleet retires a source's fleet-idle skills upstream")
	}
	if opts.source != "" {
		return a.runCurateSource(ctx, opts)
	}
	co := skillsync.CurateOptions{DryRun: opts.dryRun, Force: opts.force}
	if opts.now != "" {
		t, err := time.Parse(time.RFC3339, opts.now)
		if err != nil {
			return usageError("--now %q: want an RFC3339 time such as 2027-03-01T00:00:00Z", opts.now)
		}
		co.Now = t
	}
	open := a.writeEngine
	if opts.dryRun {
		open = a.engine // a dry run writes nothing
	}
	eng, err := open()
	if err != nil {
		return err
	}
	if err := a.importForCuration(ctx, eng, opts); err != nil {
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

// importForCuration imports what agents did since the last import,
// before curation judges idle time: a skill an agent used since would
// look idle, and once archived its use could not be recorded at all (an
// import records uses of the workspace's skills only). A dry run imports
// nothing, and says so; --no-import leaves it to the caller.
func (a *app) importForCuration(ctx context.Context, eng *skillsync.Engine, opts *curateOptions) error {
	if opts.noImport {
		return nil
	}
	if opts.dryRun {
		a.warn("the agents' records were not imported (a dry run changes nothing): a skill they used since the last skillsync usage import may show as idle here")
		return nil
	}
	reports, err := eng.ImportAll(ctx)
	for _, r := range reports {
		for _, u := range r.Unreadable {
			a.warn("usage import passed over a record, tried again next time: %s", safe(u))
		}
	}
	if err != nil {
		return fmt.Errorf("curation waits for the agents' records, whose import failed (skillsync usage import says more; curate --no-import curates without them): %w", err)
	}
	return nil
}

func (a *app) runCurateSource(ctx context.Context, opts *curateOptions) error {
	so := fleet.SourceCurateOptions{DryRun: opts.dryRun}
	if opts.now != "" {
		t, err := time.Parse(time.RFC3339, opts.now)
		if err != nil {
			return usageError("--now %q: want an RFC3339 time such as 2027-03-01T00:00:00Z", opts.now)
		}
		so.Now = t
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	w, err := eng.Fleet()
	if err != nil {
		return err
	}
	res, err := w.CurateSource(ctx, opts.source, so)
	if res != nil && a.json {
		if werr := writeJSON(a.stdout, res); werr != nil {
			return werr
		}
		return err
	}
	if err != nil {
		return err
	}
	if res.Skipped != "" {
		fmt.Fprintln(a.stdout, "curation skipped: "+res.Skipped)
		return nil
	}
	verb := "retired"
	if opts.dryRun {
		verb = "would retire"
	}
	for _, s := range res.Retired {
		fmt.Fprintf(a.stdout, "%s: %s\n", safe(s.Name), safe(s.Reason))
	}
	fmt.Fprintf(a.stdout, "source %s: %d hosts reporting, %s %d, kept %d\n", safe(res.Source), res.Hosts, verb, len(res.Retired), res.Kept)
	if res.Commit != "" {
		fmt.Fprintf(a.stdout, "branch: %s\ncommit: %s\n", safe(res.Branch), safe(res.Commit))
	}
	return nil
}
