package skillsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/syncrun"
)

// DefaultWait is how long a sync waits for another one to release the
// cache.
const DefaultWait = syncrun.DefaultWait

// SyncOptions change what a sync does (syncrun.Options). The zero value is
// skillsync sync: every source moves to its newest revision.
type SyncOptions = syncrun.Options

// Sync is the main job: fetch the sources, materialize every marketplace
// skill into the cache, refresh the targets, and write skillsync.lock. A
// source that fails keeps its last good files; the report says which
// failed, and the error is ErrPartial (some failed) or ErrFailed (all
// did). A target or AGENTS.md file that cannot be written safely (another
// workspace's, reached through a symbolic link: materialize.IsRefused) is
// refused alone, left as it is while the cache, the lock and the others
// are written; the report marks it Refused and the error names it. Other
// errors stop the whole sync: a held cache lock (IsLocked), a frozen
// mismatch (IsFrozen), a cache that cannot be written.
func (e *Engine) Sync(ctx context.Context, opts SyncOptions) (*SyncReport, error) {
	if err := e.checkNames(opts.Move); err != nil {
		return nil, err
	}
	// The sources of a sync that stops, or panics, before do takes them
	// over are ended here, before the cache's lock is let go.
	var early *syncrun.Sources
	end := func() {
		early.End()
		early = nil
	}
	defer end() // when the cache did not open
	start := func() func() {
		if !opts.Frozen && !opts.Locked {
			// No source is pinned to the lock file: the fetches start
			// as soon as the cache's lock is held (no other sync of the
			// workspace reads the stores they write then), beside the
			// reads of the cache's records, the lock file and the usage.
			early = e.openSources(ctx, opts, nil)
		}
		return end // a cache that then fails to open, before its lock goes
	}
	cache, err := materialize.OpenCacheThen(ctx, e.layout.CacheDir(), opts.WaitTime(), opts.Check(), start)
	if IsLocked(err) {
		return nil, fmt.Errorf("another sync holds the cache: %w", err)
	}
	if err != nil {
		return nil, err
	}
	defer cache.Close()
	defer end()
	// The usage and the lock file are read under the cache's lock, each
	// beside the other: a sync that waited for another one sees what
	// that one wrote.
	usage := syncrun.ReadUsage(e.Usage())
	defer usage.Wait()
	locked, hasLock, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		return nil, err
	}
	run := &syncRun{e: e, opts: opts, hasLock: hasLock, usage: usage, Run: syncrun.Run{Lock: locked, Cache: cache, Report: syncrun.NewReport()}}
	if opts.Frozen {
		if !hasLock {
			return nil, &FrozenError{Diff: []string{"there is no " + e.layout.LockFile()}, Fix: "run skillsync sync once without --frozen, and commit the lock it writes"}
		}
		if locked.Legacy() {
			return nil, &FrozenError{Diff: []string{e.layout.LockFile() + " is version 1, written by an older skillsync: its skill hashes are of a kind this one no longer computes"}, Fix: "run skillsync sync once without --frozen (every source must sync) and commit the version-2 lock it writes"}
		}
		if diff := locked.Compare(e.cfg.Sources, e.base()); len(diff) > 0 {
			return nil, &FrozenError{Diff: diff}
		}
		run.Frozen = &FrozenError{}
	}
	run.early, early = early, nil // do ends them
	report, err := run.do(ctx)
	// Before the deferred Close lets the cache's lock go: a sync waiting
	// for this one then reads what it recorded.
	run.RecordSyncs(e.now(), opts, err)
	e.noteSync(report, err)
	return report, err
}

// syncRun is one sync: what it was asked, and what it holds open and has
// done so far (syncrun.Run).
type syncRun struct {
	e    *Engine
	opts SyncOptions
	// hasLock is set when Lock was read from skillsync.lock.
	hasLock bool
	// early are the sources opened and fetching since the cache's lock
	// was taken; nil when the lock file pins them, and do opens them.
	early *syncrun.Sources
	// usage is the usage file's read, under way beside the lock's.
	usage *syncrun.UsageRead
	syncrun.Run
}

func (r *syncRun) do(ctx context.Context) (*SyncReport, error) {
	e, report := r.e, r.Report
	var err error
	opened := r.Cache.OpenWarnings()
	report.Warnings = append(report.Warnings, opened...)
	// Every fetch has ended before the sources are closed; a sync that
	// stops early stops them.
	sources := r.early
	defer func() { sources.End() }()
	r.CarryRenamed(e.cfg.Sources, e.base())
	if err := syncrun.CheckPrune(e.cfg, r.Cache.Manifest(), r.opts.PruneAll); err != nil {
		return nil, err
	}
	if sources == nil {
		sources = e.openSources(ctx, r.opts, r.Lock)
	}
	if !r.opts.Verify {
		// A skill whose git tree did not change is taken from its
		// record; a sync that verifies reads everything again.
		sources.Answer(r.Cache, e.discovery)
		sources.ReadAhead(&r.Run)
	}
	// The usage is read while the sources fetch; a usage file that stops
	// the sync stops them too.
	if r.Usage, err = r.LoadUsage(r.usage); err != nil {
		return nil, err
	}
	for _, s := range sources.List {
		report.Sources = append(report.Sources, r.syncSource(ctx, s))
	}
	report.Add(r.Cache.Prune(sourceNames(e.cfg.Sources)))
	err = r.Cache.Commit(ctx)
	// What the cache found on the way, such as file records it could not
	// use, after what it found when it opened.
	report.Warnings = append(report.Warnings, r.Cache.OpenWarnings()[len(opened):]...)
	if err != nil {
		return report, fmt.Errorf("write cache %s: %w", e.layout.CacheDir(), err)
	}
	report.Files = r.Cache.Stats()
	// The audit and the lock describe the cache, which is committed: they
	// are written before the targets, so a target that fails leaves them
	// telling the truth. The lock is written while the catalog is built.
	frozen := r.Frozen != nil && len(r.Frozen.Diff) > 0
	lockWritten := func() error { return nil }
	if frozen {
		// Said now: a later error (a target, the catalog) returns first.
		report.Frozen = r.Frozen.Diff
	} else if r.Frozen == nil { // sync --frozen never writes the lock it checked
		lockWritten = r.WriteLock(e.cfg, e.base(), e.layout.LockFile(), r.hasLock)
	}
	// The states are those of the usage this sync read at its start, which
	// also decided what the cache leaves out as archived.
	cat, err := e.catalogFrom(ctx, r.Cache.Manifest(), r.Usage)
	if err != nil {
		return report, errors.Join(err, lockWritten())
	}
	// Summarized before the targets, so a report cut short by a target
	// still says what the cache took in.
	report.Summarize(cat)
	e.recordSync(ctx, cat, r.Usage, report)
	if err := lockWritten(); err != nil {
		return report, err
	}
	// Every visible winner goes to each target and AGENTS.md file; one
	// refused is left as it is, and the others go on (targets.Places.Sync).
	placed, err := e.places(r.opts).Keeping(r.Unplaced()).Sync(ctx, cat, r.Cache.Manifest())
	report.Targets, report.Warnings = append(report.Targets, placed.Targets...), append(report.Warnings, placed.Warnings...)
	if err != nil {
		return report, err
	}
	if frozen {
		return report, r.Frozen
	}
	return report, report.Err()
}

// openSources opens the configured sources, pinned to pins where opts
// say so, and starts their fetches (syncrun.Open).
func (e *Engine) openSources(ctx context.Context, opts SyncOptions, pins *lock.File) *syncrun.Sources {
	return syncrun.Open(ctx, e.cfg.Sources, pins, opts, func(s config.Source, rev string, late func(*repository.Options)) (repository.Repository, error) {
		sp := e.spec(s, rev)
		sp.Options.Late = late
		return e.kinds.Open(sp)
	})
}

// syncSource takes one source through the sync, or reports why it could
// not: its revision (once its own fetch ends; see Run.Revision), then
// Materialize: its skills discovered unless the cache holds that revision
// under that config, the first of two with one name kept, archived ones
// left out, the changed ones written.
func (r *syncRun) syncSource(ctx context.Context, s *syncrun.Source) SourceReport {
	cfg := s.Config
	name, rep := cfg.Name, SourceReport{Source: cfg.Name, Type: cfg.Kind, Status: StatusUnchanged}
	if s.Broken != nil {
		return r.Failed(rep, s.Broken)
	}
	rev, err := r.Revision(ctx, name, s.Fetch, s.Repo)
	if s.Fetch != nil { // a fetch that failed took its time too: a remote that hangs is no 0 s
		rep.FetchTime = s.Fetch.Wait().Duration()
	}
	if rev == "" {
		return r.Failed(rep, err)
	}
	rep.Revision = string(rev)
	src := materialize.Source{Name: name, Revision: rep.Revision, Fingerprint: r.e.fingerprint(cfg), Discovery: r.e.discovery(cfg),
		MaxSkillSize: r.e.maxSkillSize()}
	rep = r.Materialize(ctx, s.Repo, src, rep, r.e.sourceOptions(cfg).Selects)
	r.Report.CheckYield(rep, r.e.sourceOptions(cfg).SourceSizeLimit())
	if err != nil {
		return r.Failed(rep, err)
	}
	return rep
}

// recordSync appends the sync's changes to the audit log and marks the
// first sighting of the catalog's skills. Neither may fail the sync: the
// files are already in place, so a failure is a warning.
func (e *Engine) recordSync(ctx context.Context, cat *layering.Catalog, usage *curator.Usage, report *SyncReport) {
	now := e.now()
	if err := e.Audit().Append(report.Events(now, e.actor)...); err != nil {
		report.Warnings = append(report.Warnings, err.Error())
	}
	if err := e.seen(ctx, cat, now, usage); err != nil {
		report.Warnings = append(report.Warnings, err.Error())
	}
}

// seen records the first sighting of every winning copy in cat. Only the
// jobs that change the workspace call it: a read command writes nothing.
// known, the usage the caller read already (nil when none), spares
// reading it again when every copy was seen before: the common case.
func (e *Engine) seen(ctx context.Context, cat *layering.Catalog, now time.Time, known *curator.Usage) error {
	copies := make([]curator.Copy, 0, len(cat.Winners))
	for _, w := range cat.Winners {
		if c, ok := e.copyOf(&w.Entry); ok {
			copies = append(copies, c)
		}
	}
	if known != nil && known.AllSeen(copies) {
		return nil
	}
	store := e.Usage()
	store.Resolve = e.resolverFrom(cat)
	return store.Seen(ctx, copies, now)
}

func sourceNames(sources []config.Source) []string {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.Name
	}
	return names
}
