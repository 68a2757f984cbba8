package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/internal/lockfile"
)

type syncOptions struct {
	frozen bool
	wait   time.Duration
	jobs   int
}

func (a *app) syncCommand() *cobra.Command {
	var opts syncOptions
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Fetch, materialize every marketplace skill, refresh targets, write the lock",
		Long: `The main job. Fetch the git sources, write every marketplace skill into
<workspace>/.skills-cache/<source>/<name>/, place every winning skill in the
configured targets, and write skillsync.lock.

Unchanged files are never rewritten; a changed skill is built aside and
swapped in whole, so a reader never sees half of it. A source that fails keeps
its last good files. With no config, the built-in skills are synced into
./.skills-cache/builtin/.

Exit status: 0 success, 1 failure, 2 another sync holds the lock, 3 some
sources failed and kept their last good files.`,
		Example: `  skillsync sync
  skillsync sync --frozen        # exactly the revisions in skillsync.lock
  skillsync sync --json --wait 2m`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runSync(c.Context(), skillsync.SyncOptions{Frozen: opts.frozen, Wait: opts.wait, Jobs: opts.jobs})
		},
	}
	addSyncFlags(cmd, &opts)
	cmd.Flags().BoolVar(&opts.frozen, "frozen", false, "sync the locked revisions; fail when the config or content differs from skillsync.lock")
	return cmd
}

func addSyncFlags(cmd *cobra.Command, opts *syncOptions) {
	cmd.Flags().DurationVar(&opts.wait, "wait", skillsync.DefaultWait, "how long to wait for another sync to finish")
	cmd.Flags().IntVar(&opts.jobs, "jobs", skillsync.DefaultJobs, "sources fetched at once")
}

func (a *app) updateCommand() *cobra.Command {
	var opts syncOptions
	cmd := &cobra.Command{
		Use:   "update [SOURCE...]",
		Short: "Move the lock to the newest revisions and sync",
		Long: `Sync with the named sources moved to their newest revisions and the others
kept at the revisions in skillsync.lock. With no SOURCE every source moves.`,
		Example: `  skillsync update team
  skillsync update`,
		RunE: func(c *cobra.Command, sources []string) error {
			so := skillsync.SyncOptions{Wait: opts.wait, Jobs: opts.jobs}
			if len(sources) > 0 {
				so.Update = sources
			}
			return a.runSync(c.Context(), so)
		},
	}
	addSyncFlags(cmd, &opts)
	return cmd
}

func (a *app) runSync(ctx context.Context, opts skillsync.SyncOptions) error {
	eng, err := a.engine()
	if err != nil {
		return err
	}
	report, err := eng.Sync(ctx, opts)
	if err != nil {
		return syncError(err)
	}
	a.printSyncReport(report)
	return syncExit(report)
}

// syncError gives a sync failure its exit code.
func syncError(err error) error {
	var held *lockfile.HeldError
	var frozen *skillsync.FrozenError
	switch {
	case errors.As(err, &held):
		msg := "another sync holds the lock"
		if held.PID > 0 {
			msg += fmt.Sprintf(" (pid %d)", held.PID)
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: %s", msg, held.Path)}
	case errors.As(err, &frozen):
		return &exitError{code: exitFailure, err: err}
	}
	return err
}

func syncExit(r *skillsync.SyncReport) error {
	failed := r.Failed()
	switch {
	case failed == 0:
		return nil
	case failed == len(r.Sources):
		return &exitError{code: exitFailure}
	}
	return &exitError{code: exitPartial}
}

func (a *app) printSyncReport(r *skillsync.SyncReport) {
	for _, w := range r.Warnings {
		a.warn("%s", w)
	}
	if a.json {
		_ = writeJSON(a.stdout, r)
		return
	}
	if !a.quiet {
		for _, p := range r.Problems {
			fmt.Fprintf(a.stderr, "%s:%s: %s: %s (%s)\n", p.Source, p.Path, p.Level, p.Message, p.Rule)
		}
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	for _, s := range r.Sources {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Source, shortRev(s.Revision), s.Status, plural(s.Skills, "skill"))
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "skills: %d added, %d updated, %d removed\n", len(r.Skills.Added), len(r.Skills.Updated), len(r.Skills.Removed))
	fmt.Fprintf(a.stdout, "files: %d written, %d unchanged, %d removed, %s written\n",
		r.Files.Written, r.Files.Unchanged, r.Files.Removed, bytesString(r.Files.BytesWritten))
	for _, t := range r.Targets {
		line := fmt.Sprintf("target %s: %d written, %d removed", t.Dir, t.Written, t.Removed)
		if len(t.Conflicts) > 0 {
			line += "; left alone (not made by skillsync): " + strings.Join(t.Conflicts, ", ")
		}
		fmt.Fprintln(a.stdout, line)
	}
	for _, s := range r.Sources {
		if s.Error != "" {
			fmt.Fprintf(a.stderr, "skillsync: source %s failed and kept its last good files: %s\n", s.Source, s.Error)
		}
	}
}

func shortRev(rev string) string {
	switch {
	case rev == "":
		return "-"
	case len(rev) > 12:
		return rev[:12]
	}
	return rev
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
