package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type useOptions struct {
	view bool
}

func (a *app) useCommand() *cobra.Command {
	var opts useOptions
	cmd := &cobra.Command{
		Use:   "use NAME",
		Short: "Record that a skill was used (or, with --view, looked at)",
		Long: `Record a use of a catalog skill at the current time, or with --view a view:
an agent opened the skill to decide whether it fits. Curation counts idle
time from the last use or view. Call it from an agent's hook after a skill
helped. An unknown name exits 1 and suggests the nearest names.`,
		Example: `  skillsync use release-notes
  skillsync use --view pdf`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			return a.runUse(c.Context(), names[0], opts)
		},
	}
	cmd.Flags().BoolVar(&opts.view, "view", false, "record a view instead of a use")
	return cmd
}

func (a *app) runUse(ctx context.Context, name string, opts useOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	recorded, err := eng.Use(ctx, name, opts.view)
	if err != nil {
		return notFound(err)
	}
	kind := map[bool]string{true: "view", false: "use"}[opts.view]
	if a.json {
		return writeJSON(a.stdout, map[string]string{"name": recorded, "recorded": kind})
	}
	if !a.quiet {
		fmt.Fprintf(a.stderr, "recorded a %s of %s\n", kind, recorded)
	}
	return nil
}

// notFound gives an unknown skill exit status 1.
func notFound(err error) error {
	var unknown *skillsync.UnknownSkillError
	if errors.As(err, &unknown) {
		return &exitError{code: exitFailure, err: err}
	}
	return err
}

type curateOptions struct {
	dryRun bool
	now    string
	force  bool
}

func (a *app) curateCommand() *cobra.Command {
	var opts curateOptions
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
			return a.runCurate(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the plan and change nothing")
	cmd.Flags().StringVar(&opts.now, "now", "", "judge idle time at this RFC3339 time instead of now")
	cmd.Flags().BoolVar(&opts.force, "force", false, "curate even when a skill was used within min_idle")
	return cmd
}

func (a *app) runCurate(ctx context.Context, opts curateOptions) error {
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
		fmt.Fprintf(a.stdout, "%s: %s -> %s (%s)\n", c.Name, c.From, c.To, c.Reason)
	}
	fmt.Fprintf(a.stdout, "checked %s, %s %d\n", plural(plan.Checked, "skill"), verb, len(plan.Changes))
	return nil
}

func (a *app) restoreCommand() *cobra.Command {
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
			eng, err := a.engine()
			if err != nil {
				return err
			}
			name, err := eng.Restore(c.Context(), names[0])
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			if a.json {
				return writeJSON(a.stdout, map[string]string{"name": name, "state": "active"})
			}
			fmt.Fprintf(a.stdout, "restored %s\n", name)
			return nil
		},
	}
}

func (a *app) pinCommand(pinned bool) *cobra.Command {
	use, short := "pin NAME", "Keep a skill out of curation"
	if !pinned {
		use, short = "unpin NAME", "Let curation change a pinned skill again"
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: "  skillsync " + use[:len(use)-5] + " release-notes",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, names []string) error {
			eng, err := a.engine()
			if err != nil {
				return err
			}
			name, err := eng.Pin(c.Context(), names[0], pinned)
			if err != nil {
				return notFound(err)
			}
			if a.json {
				return writeJSON(a.stdout, map[string]any{"name": name, "pinned": pinned})
			}
			fmt.Fprintf(a.stdout, "%s %s\n", map[bool]string{true: "pinned", false: "unpinned"}[pinned], name)
			return nil
		},
	}
}

type auditOptions struct {
	since string
	op    string
}

func (a *app) auditCommand() *cobra.Command {
	var opts auditOptions
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit log of curation and sync changes",
		Long: `Print the audit log (skills/.audit/YYYY-MM-DD.jsonl): every curation change
(stale, archived, reactivated, restored, pinned, unpinned) and every sync
change (added, updated, removed, with the skill hash before and after).`,
		Example: `  skillsync audit --since 2026-11-01
  skillsync audit --op archived --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runAudit(opts)
		},
	}
	cmd.Flags().StringVar(&opts.since, "since", "", "only events from this date (YYYY-MM-DD) or RFC3339 time on")
	cmd.Flags().StringVar(&opts.op, "op", "", "only events of this op")
	return cmd
}

func (a *app) runAudit(opts auditOptions) error {
	var since time.Time
	if opts.since != "" {
		var err error
		if since, err = time.Parse("2006-01-02", opts.since); err != nil {
			if since, err = time.Parse(time.RFC3339, opts.since); err != nil {
				return usageError("--since %q: want YYYY-MM-DD or an RFC3339 time", opts.since)
			}
		}
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	events, bad, err := eng.Audit().Read(since, opts.op)
	if err != nil {
		return err
	}
	for _, b := range bad {
		a.warn("skipped a line that does not parse: %s", b)
	}
	if a.json {
		return writeJSON(a.stdout, orEmpty(events))
	}
	for _, e := range events {
		line := fmt.Sprintf("%s  %-11s %s", e.TS.Format(time.RFC3339), e.Op, e.Target)
		if e.From != "" || e.To != "" {
			line += fmt.Sprintf("  %s -> %s", e.From, e.To)
		}
		if e.BeforeHash != "" || e.AfterHash != "" {
			line += fmt.Sprintf("  %s -> %s", shortRev(e.BeforeHash), shortRev(e.AfterHash))
		}
		if e.Detail != "" {
			line += "  (" + e.Detail + ")"
		}
		fmt.Fprintf(a.stdout, "%s  by %s\n", line, e.Actor)
	}
	return nil
}
