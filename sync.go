package skillsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	cache, err := materialize.OpenCache(ctx, e.layout.CacheDir(), opts.WaitTime(), opts.Check())
	if IsLocked(err) {
		return nil, fmt.Errorf("another sync holds the cache: %w", err)
	}
	if err != nil {
		return nil, err
	}
	defer cache.Close()
	// The lock file is read under the cache's lock: a sync that waited
	// for another one sees the lock that one wrote.
	locked, hasLock, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		return nil, err
	}
	run := &syncRun{e: e, opts: opts, hasLock: hasLock, Run: syncrun.Run{Lock: locked, Cache: cache, Report: syncrun.NewReport()}}
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
	syncrun.Run
}

// sourceRun is one configured source through a sync.
type sourceRun struct {
	cfg  config.Source
	repo repository.Repository
	// broken is why the source could not even be opened; it then fails
	// alone and keeps its last good files.
	broken error
	// fetch is the source's fetch under way, nil for a source read in
	// place.
	fetch *syncrun.Pending
}

func (r *syncRun) do(ctx context.Context) (*SyncReport, error) {
	e, report := r.e, r.Report
	var err error
	opened := r.Cache.OpenWarnings()
	report.Warnings = append(report.Warnings, opened...)
	r.CarryRenamed(e.cfg.Sources, e.base())
	if err := syncrun.CheckPrune(e.cfg, r.Cache.Manifest(), r.opts.PruneAll); err != nil {
		return nil, err
	}
	sources := r.open()
	defer closeAll(sources)
	fetchCtx, stopFetches := context.WithCancel(ctx)
	defer stopFetches()
	wait := r.fetch(fetchCtx, sources)
	// Every fetch has ended before the sources are closed.
	defer wait()
	// The usage is read while the sources fetch; a usage file that stops
	// the sync stops them too.
	if r.Usage, err = r.LoadUsage(e.Usage()); err != nil {
		stopFetches()
		return nil, err
	}
	for _, s := range sources {
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

// open opens every configured source, each git source pinned to its
// locked revision where the options say so.
func (r *syncRun) open() []*sourceRun {
	var out []*sourceRun
	for _, s := range r.e.cfg.Sources {
		rev := ""
		if pinned, ok := r.Lock.Sources[s.Name]; ok && (r.opts.Frozen || (r.opts.Locked && !slices.Contains(r.opts.Move, s.Name))) {
			rev = pinned.Revision
		}
		sp := r.e.spec(s, rev)
		if !r.opts.Verify {
			// A skill whose git tree did not change is taken from its
			// record; a sync that verifies reads everything again.
			r.Cache.Answer(&sp.Options, s.Name, r.e.discovery(s))
		}
		repo, err := r.e.kinds.Open(sp)
		out = append(out, &sourceRun{cfg: s, repo: repo, broken: err})
	}
	return out
}

// closeAll releases what open sources hold (a database's connections and
// spool). The cache holds their files by now.
func closeAll(sources []*sourceRun) {
	for _, s := range sources {
		if s.repo != nil {
			closeRepository(s.repo)
		}
	}
}

// fetch starts bringing the sources with a local copy up to date, jobs
// at a time, and returns at once (syncrun.Start): each source is
// materialized as soon as its own fetch is done. wait waits for every
// fetch.
func (r *syncRun) fetch(ctx context.Context, sources []*sourceRun) (wait func()) {
	var fetchers []repository.Fetcher
	var runs []*sourceRun
	for _, s := range sources {
		if f, ok := s.repo.(repository.Fetcher); ok {
			fetchers, runs = append(fetchers, f), append(runs, s)
		}
	}
	pending, fetched := syncrun.Start(ctx, fetchers, r.opts.Jobs, r.opts.Offline)
	names := make([]string, len(pending))
	for i, p := range pending {
		runs[i].fetch, names[i] = p, runs[i].cfg.Name
	}
	if r.opts.Verify {
		return fetched // it reads every file again, records or not
	}
	ahead := r.ReadAhead(pending, names)
	return func() {
		fetched()
		ahead()
	}
}

// syncSource takes one source through the sync, or reports why it could
// not: its revision (once its own fetch ends; see Run.Revision), then
// Materialize: its skills discovered unless the cache holds that revision
// under that config, the first of two with one name kept, archived ones
// left out, the changed ones written.
func (r *syncRun) syncSource(ctx context.Context, s *sourceRun) SourceReport {
	name, rep := s.cfg.Name, SourceReport{Source: s.cfg.Name, Type: s.cfg.Kind, Status: StatusUnchanged}
	if s.broken != nil {
		return r.Failed(rep, s.broken)
	}
	rev, err := r.Revision(ctx, name, s.fetch, s.repo)
	if s.fetch != nil { // a fetch that failed took its time too: a remote that hangs is no 0 s
		rep.FetchTime = s.fetch.Wait().Duration()
	}
	if rev == "" {
		return r.Failed(rep, err)
	}
	rep.Revision = string(rev)
	src := materialize.Source{Name: name, Revision: rep.Revision, Fingerprint: r.e.fingerprint(s.cfg), Discovery: r.e.discovery(s.cfg),
		MaxSkillSize: r.e.maxSkillSize()}
	rep = r.Materialize(ctx, s.repo, src, rep, r.e.sourceOptions(s.cfg).Selects)
	r.Report.CheckYield(rep, r.e.sourceOptions(s.cfg).SourceSizeLimit())
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
