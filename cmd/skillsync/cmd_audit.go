package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/materialize"
)

type auditOptions struct {
	since string
	op    string
}

func newAuditCommand(a *app, runF func(context.Context, *auditOptions) error) *cobra.Command {
	opts := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit log of curation and sync changes",
		Long: `Print the audit log (skills/.audit/YYYY-MM-DD.jsonl): every curation change
(stale, archived, reactivated, restored, pinned, unpinned), every sync change
(added, updated, removed, repaired, with the skill hash before and after) and
every step of the promotion gate (proposed, promoted, rejected, published).`,
		Example: `  skillsync audit --since 2026-11-01
  skillsync audit --op archived --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runAudit)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.since, "since", "", "only events from this date (YYYY-MM-DD) or RFC3339 time on")
	cmd.Flags().StringVar(&opts.op, "op", "", "only events of this op")
	return cmd
}

// auditOps are the ops the audit log holds, which --op may name.
func auditOps() []string {
	return []string{
		string(curator.OpStale), string(curator.OpArchived), string(curator.OpReactivated),
		string(curator.OpRestored), string(curator.OpPinned), string(curator.OpUnpinned),
		string(materialize.Added), string(materialize.Updated), string(materialize.Removed), string(materialize.Repaired),
		string(drafts.OpProposed), string(drafts.OpPromoted), string(drafts.OpRejected), string(drafts.OpPublished),
	}
}

func (a *app) runAudit(_ context.Context, opts *auditOptions) error {
	if opts.op != "" && !slices.Contains(auditOps(), opts.op) {
		return usageError("--op %q is no op of the audit log; the ops are %s", opts.op, strings.Join(auditOps(), ", "))
	}
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
		a.warn("skipped a line that does not parse: %s", safe(b))
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
		fmt.Fprintf(a.stdout, "%s  by %s\n", safe(line), safe(e.Actor))
	}
	return nil
}
