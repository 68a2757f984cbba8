package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/syncrun"
)

type syncOptions struct {
	frozen   bool
	verify   bool
	stat     bool
	pruneAll bool
	wait     time.Duration
	jobs     int
}

func newSyncCommand(a *app, runF func(context.Context, *syncOptions) error) *cobra.Command {
	opts := &syncOptions{}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Fetch, materialize every marketplace skill, refresh targets, write the lock",
		Long: `The main job. Fetch the git sources, write every marketplace skill into
<workspace>/.skills-cache/<source>/<name>/, place every winning skill in the
configured targets, and write skillsync.lock.

Every source moves to its newest revision (the tip of its ref:, or of the
remote's default branch) and the lock records it; only --frozen keeps to the
lock, so a team pins with ref: (a tag or a commit) in the config and runs
sync --frozen in CI and on machines that must match the lock.

Unchanged files are never rewritten; a changed skill is built aside and
swapped in whole, so a reader never sees half of it. A source that fails keeps
its last good files. With no config, the built-in skills are synced into
./.skills-cache/builtin/. A config without sources would empty the cache: sync
refuses unless --prune-all is given.

A source whose revision and settings match its record costs nothing per
file: the records are trusted. --check-stat compares every cached and target
file's size and time with its record (the daemon does so on its first sync
and every schedule.stat_check_every-th after), and --verify hashes them all;
either rewrites what differs.

Exit status: 0 success, 1 failure (another sync holding the lock past --wait
too, a frozen mismatch, a target refused), 2 bad usage or config, 3 some sources
(or some skills) failed and kept their last good files: a cached skill whose new
upstream version is invalid keeps its last good copy, and each sync warns of it
until it is fixed upstream. When several apply, the most severe decides (2 over
1 over 3); each is still said, and --json's exit_code and outcomes list them.`,
		Example: `  skillsync sync
  skillsync sync --frozen        # exactly the revisions in skillsync.lock
  skillsync sync --json --wait 2m`,
		Args:        args(cobra.NoArgs),
		Annotations: map[string]string{bigHeap: "yes"},
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runSync)(c.Context(), opts)
		},
	}
	addSyncFlags(cmd, opts)
	cmd.Flags().BoolVar(&opts.frozen, "frozen", false, "sync the locked revisions; fail when the config or content differs from skillsync.lock")
	cmd.Flags().BoolVar(&opts.verify, "verify", false, "hash every cached and target file instead of trusting the records")
	cmd.Flags().BoolVar(&opts.stat, "check-stat", false, "compare every cached and target file's size and time with its record")
	cmd.Flags().BoolVar(&opts.pruneAll, "prune-all", false, "let a config without sources empty the cache")
	return cmd
}

func addSyncFlags(cmd *cobra.Command, opts *syncOptions) {
	cmd.Flags().DurationVar(&opts.wait, "wait", skillsync.DefaultWait, "how long to wait for another sync to finish")
	cmd.Flags().IntVar(&opts.jobs, "jobs", skillsync.DefaultJobs, "sources fetched at once")
}

func (o *syncOptions) engineOptions() skillsync.SyncOptions {
	return skillsync.SyncOptions{Frozen: o.frozen, Verify: o.verify, StatCheck: o.stat, PruneAll: o.pruneAll, Wait: o.wait, Jobs: o.jobs}
}

func (a *app) runSync(ctx context.Context, opts *syncOptions) error {
	return a.sync(ctx, opts.engineOptions())
}

// sync runs a sync and prints its report.
func (a *app) sync(ctx context.Context, opts skillsync.SyncOptions) error {
	if opts.Jobs < 1 {
		return usageError("--jobs must be at least 1")
	}
	progress := a.progress()
	eng, err := a.writeEngine(progress.option()...)
	if err != nil {
		return err // bad config: no report, as docs/sync.md has it
	}
	report, err := eng.Sync(ctx, opts)
	progress.clear()
	if report == nil {
		return a.syncStopped(err)
	}
	out := syncOutcome(report, err)
	a.printSyncReport(report, out)
	if cfg := eng.Config(); cfg.File != "" && len(cfg.Sources) == 0 && len(cfg.Targets) == 0 {
		// As init leaves a config when it finds no agent: a sync that
		// says "0 added" and no more leaves a newcomer guessing why.
		a.warn("%s names no source and no target, so sync brings no skill anywhere: skillsync add owner/repo adds a source (or uncomment '- embedded: builtin' there for the skills built into skillsync), and skillsync init --agent NAME a target (skillsync agents lists them)", safe(cfg.File))
	}
	return out
}

// syncStopped is the error of a sync stopped before it had a report
// (another sync holding the lock, a config the sync refuses, a usage
// file or a cache it cannot use): with --json
// it prints the report all the same (stoppedReport), so a script reads
// exit_code and outcomes from every sync --json that ran.
func (a *app) syncStopped(err error) error {
	if a.json && err != nil {
		_ = writeJSON(a.stdout, syncReportOf(stoppedReport(err), err))
	}
	return err
}

// stoppedReport is the report of a sync that err stopped before it had
// one: empty, but for the frozen lines of a sync --frozen the lock
// refused before any source was read.
func stoppedReport(err error) *skillsync.SyncReport {
	report := syncrun.NewReport()
	var frozen *skillsync.FrozenError
	if errors.As(err, &frozen) {
		report.Frozen = frozen.Diff
	}
	return report
}

// outcomes are the several things one sync's exit stands for (a target
// refused, and a source failed too): its status is the most severe of
// them (exitCode), and each is said, the sources' failures by the report
// and the rest by their messages.
type outcomes []error

func (o outcomes) Error() string   { return errors.Join(o...).Error() }
func (o outcomes) Unwrap() []error { return o }

// syncOutcome is a sync's error once its report is printed: err, with
// what the report says that err leaves out. The engine returns one error,
// the first that stopped it: a refused target or a frozen mismatch comes
// back in place of the sources' ErrPartial, and a refused target in place
// of the frozen mismatch, though the report holds each; the exit status
// and the output must not lose them. The report says which sources
// failed; any other error (a target refused, the lock not written, a
// stop) it does not say, so it is printed.
func syncOutcome(r *skillsync.SyncReport, err error) error {
	if errors.Is(err, context.Canceled) {
		// Stopped: the sources it did not reach failed for that alone, and
		// the stop is the one thing to say (interrupted).
		return err
	}
	var out outcomes
	if err != nil && !errors.Is(err, skillsync.ErrPartial) && !errors.Is(err, skillsync.ErrFailed) {
		out = append(out, err)
	}
	if serr := r.Err(); serr != nil {
		out = append(out, reported(serr))
	}
	if len(r.Frozen) > 0 && !skillsync.IsFrozen(err) {
		out = append(out, &skillsync.FrozenError{Diff: r.Frozen})
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

// The outcomes of a sync, as sync --json names them; outcomesOf lists
// them most severe first.
const (
	outcomeError   = "error"
	outcomeFrozen  = "frozen"
	outcomeRefused = "target-refused"
	outcomeFailed  = "failed"
	outcomePartial = "partial"
)

// outcome is one thing a sync's exit stands for, and the status it
// alone would give.
type outcome struct {
	name string
	code int
}

// outcomesOf are the outcomes of a sync that returned err (syncOutcome),
// most severe first; none for a sync that succeeded.
func outcomesOf(err error) []outcome {
	parts := []error{err}
	if o, ok := err.(outcomes); ok {
		parts = o
	}
	found := map[string]int{}
	for _, e := range parts {
		switch {
		case e == nil:
		case skillsync.IsFrozen(e):
			found[outcomeFrozen] = exitCode(e)
		case materialize.IsRefused(e):
			found[outcomeRefused] = exitCode(e)
		case errors.Is(e, skillsync.ErrFailed):
			found[outcomeFailed] = exitCode(e)
		case errors.Is(e, skillsync.ErrPartial):
			found[outcomePartial] = exitCode(e)
		default:
			found[outcomeError] = exitCode(e)
		}
	}
	var out []outcome
	for _, n := range []string{outcomeError, outcomeFrozen, outcomeRefused, outcomeFailed, outcomePartial} {
		if code, ok := found[n]; ok {
			out = append(out, outcome{name: n, code: code})
		}
	}
	return out
}

// outcomeNames are the names of err's outcomes (outcomesOf).
func outcomeNames(err error) []string {
	names := []string{}
	for _, o := range outcomesOf(err) {
		names = append(names, o.name)
	}
	return names
}

// outcomeSaid is what the outcome name means, for the line that says
// why a sync exits as it does when several apply.
func outcomeSaid(name string) string {
	switch name {
	case outcomeFrozen:
		return "the lock does not match what sync --frozen found"
	case outcomeRefused:
		return "a target was refused and left as it is"
	case outcomeFailed:
		return "every source failed and kept its last good files"
	case outcomePartial:
		return "some sources or skills failed and kept their last good files"
	}
	return "the sync failed"
}

// syncReportJSON is sync --json's report: the sync's, with its exit
// status and every outcome that went into it, so a script that sees 1
// for a refused target still learns that a source is behind.
type syncReportJSON struct {
	*skillsync.SyncReport
	ExitCode int      `json:"exit_code"`
	Outcomes []string `json:"outcomes"`
}

// syncReportOf is r as sync --json gives it, out being its syncOutcome; nil
// for no report.
func syncReportOf(r *skillsync.SyncReport, out error) *syncReportJSON {
	if r == nil {
		return nil
	}
	return &syncReportJSON{SyncReport: r, ExitCode: exitCode(out), Outcomes: outcomeNames(out)}
}

// problemPlace is where a sync's problem is, "SOURCE:PATH:LINE" as
// skill.Problem.String gives it (list's form, for editors to jump to), or
// the one of the two it has: a problem of a whole source has no path.
func problemPlace(source, path string, line int) string {
	if line > 0 && path != "" {
		path += ":" + strconv.Itoa(line)
	}
	if source == "" || path == "" {
		return safe(source + path)
	}
	return safe(source) + ":" + safe(path)
}

// printSyncReport prints what the sync did; out is its syncOutcome.
func (a *app) printSyncReport(r *skillsync.SyncReport, out error) {
	for _, w := range r.Warnings {
		a.warn("%s", safe(w))
	}
	if a.json {
		_ = writeJSON(a.stdout, syncReportOf(r, out))
		return
	}
	if !a.quiet {
		for _, p := range r.Problems {
			fmt.Fprintf(a.stderr, "%s: %s: %s (%s)\n", problemPlace(p.Source, p.Path, p.Line), p.Level, safe(p.Message), p.Rule)
		}
	}
	tw := newTable(a.stdout)
	for _, s := range r.Sources {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Source, shortRev(s.Revision), s.Status, plural(s.Skills, "skill"))
	}
	tw.Flush()
	line := fmt.Sprintf("skills: %d added, %d updated, %d removed", len(r.Skills.Added), len(r.Skills.Updated), len(r.Skills.Removed))
	if n := len(r.Skills.Repaired); n > 0 {
		line += fmt.Sprintf(", %d repaired (files or records mended)", n)
	}
	fmt.Fprintln(a.stdout, line)
	fmt.Fprintf(a.stdout, "files: %d written, %d unchanged, %d removed, %s written\n",
		r.Files.Written, r.Files.Unchanged, r.Files.Removed, bytesString(r.Files.BytesWritten))
	if len(r.Shadowed) > 0 || len(r.Duplicates) > 0 {
		fmt.Fprintf(a.stdout, "names: %d shadowed by a higher source, %s inside a source (skillsync show NAME says which won)\n",
			len(r.Shadowed), plural(len(r.Duplicates), "duplicate"))
	}
	for _, t := range r.Targets {
		if t.Refused {
			fmt.Fprintf(a.stdout, "target %s: refused, left as it is (see below)\n", t.Dir)
			continue
		}
		line := fmt.Sprintf("target %s: %s written, %d removed", t.Dir, plural(t.Written, "file"), t.Removed)
		if len(t.Conflicts) > 0 {
			line += "; left alone (not made by skillsync): " + safe(strings.Join(t.Conflicts, ", "))
		}
		fmt.Fprintln(a.stdout, line)
	}
	for _, s := range r.Sources {
		switch {
		case s.Error == "":
		case s.Revision == "" && s.Skills == 0:
			// No earlier sync brought it, or its cache was removed since:
			// there are no good files to keep.
			a.logError(fmt.Sprintf("source %s failed, and the cache holds none of its files to keep: %s", s.Source, safe(s.Error)))
		default:
			a.logError(fmt.Sprintf("source %s failed and kept its last good files: %s", s.Source, safe(s.Error)))
		}
	}
}

// exitSaid is the last line of a sync whose exit stands for several
// outcomes: which, and the status each alone would give; "" for one.
func exitSaid(err error) string {
	all := outcomesOf(err)
	if len(all) < 2 {
		return ""
	}
	said := make([]string, len(all))
	for i, o := range all {
		said[i] = fmt.Sprintf("%s (%d)", outcomeSaid(o.name), o.code)
	}
	return fmt.Sprintf("exit status %d, the most severe of: %s", exitCode(err), strings.Join(said, "; "))
}
