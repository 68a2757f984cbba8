package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
)

type statusOptions struct {
	check bool
}

// errAttention ends a status that found something needing a person.
var errAttention = errors.New("something needs a person")

func newStatusCommand(a *app, runF func(context.Context, *statusOptions) error) *cobra.Command {
	opts := &statusOptions{}
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the workspace's state on one screen",
		Long: `Show the workspace: each source (its revision, when it last synced,
whether upstream moved at the last check, its last error), each target (in
sync with its record, edited copies waiting in .skillsync-conflicts/), the
skills used in the last 7 and 30 days, curation (stale, archived, next run
when a daemon holds the workspace), the drafts waiting, and whether a daemon
holds the workspace and since when.

The sources' health comes from their last syncs, the daemon's or by hand
(sync, update, add, remove), whichever is later; --check asks each upstream
now instead, as skillsync outdated does. Nothing is changed.

Exit status: 0 when all is well, 1 when something needs a person (a failing
source, conflicts waiting, a target that differs from its record, a running
daemon whose usage import or curation failed, or that runs the config it read
before because the one on disk no longer loads).`,
		Example: `  skillsync status
  skillsync status --json | jq '.attention'`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runStatus)(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.check, "check", false, "ask each source's upstream whether it moved")
	return c
}

func (a *app) runStatus(ctx context.Context, opts *statusOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	st, err := eng.Status(ctx, skillsync.StatusOptions{Check: opts.check})
	if err != nil {
		return err
	}
	if a.json {
		if err := writeJSON(a.stdout, st); err != nil {
			return err
		}
	} else {
		a.printStatus(st)
	}
	if len(st.Attention) > 0 {
		return reported(errAttention)
	}
	return nil
}

func (a *app) printStatus(st *skillsync.WorkspaceStatus) {
	w := a.stdout
	fmt.Fprintf(w, "workspace %s\n", safe(st.Workspace))
	if st.Daemon != nil {
		fmt.Fprintf(w, "daemon    pid %d since %s", st.Daemon.PID, when(&st.Daemon.Since))
		if st.Daemon.Listen != "" {
			fmt.Fprintf(w, ", metrics on http://%s/metrics", safe(st.Daemon.Listen))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "daemon    none holds this workspace")
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "SOURCE\tKIND\tREVISION\tSYNCED\tUPSTREAM\tERROR")
	for _, s := range st.Sources {
		moved := "-"
		if s.Moved != nil {
			moved = map[bool]string{true: "moved", false: "same"}[*s.Moved]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", safe(s.Name), s.Kind, shortRev(s.Revision), when(s.SyncedAt), moved, safe(s.Error))
	}
	tw.Flush()
	for _, t := range st.Targets {
		if t.Refused != "" {
			fmt.Fprintf(w, "target %s: refused, every sync leaves it as it is (see below)\n", safe(t.Dir))
			continue
		}
		if t.Unsynced {
			fmt.Fprintf(w, "target %s: not written by a sync yet\n", safe(t.Dir))
			continue
		}
		state := "in sync"
		if !t.InSync {
			state = plural(t.Differences, "file") + " differ from the record"
			if t.Differences == 1 {
				state = "1 file differs from the record"
			}
		}
		fmt.Fprintf(w, "target %s: %s, %s waiting in .skillsync-conflicts/\n", safe(t.Dir), state, plural(len(t.Conflicts), "conflict"))
	}
	fmt.Fprintf(w, "usage: %s used in the last 7 days, %d in the last 30\n", plural(st.Usage.Used7d, "skill"), st.Usage.Used30d)
	next := "next " + when(st.Curation.NextRun)
	if st.Daemon == nil {
		next = "runs only under skillsync daemon (or cron): no daemon holds this workspace"
	}
	fmt.Fprintf(w, "curation: %d stale, %d archived, last run %s, %s\n", st.Curation.Stale, st.Curation.Archived, when(st.Curation.LastRun), next)
	fmt.Fprintf(w, "drafts: %d waiting\n", st.Drafts)
	if st.FleetPush != nil {
		fmt.Fprintf(w, "fleet: last push %s %s\n", when(&st.FleetPush.At), map[bool]string{true: "failed: " + safe(st.FleetPush.Error), false: "succeeded"}[st.FleetPush.Error != ""])
	}
	for _, msg := range st.Attention {
		fmt.Fprintf(w, "needs a person: %s\n", safe(msg))
	}
}

// when is t in the local time, to the second; "-" for nil.
func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
