package skillsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
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
	var early *fetches
	if !opts.Frozen && !opts.Locked {
		// No source is pinned to the lock, which is read under the
		// cache's lock: the fetches start now, beside opening the cache
		// and reading the lock and the usage, rather than after them
		// (on a sync with nothing new, the fetch is the longest of
		// these). The sources' discoveries, which come after the
		// fetches, take the cache's answers once it is open (answer).
		early = e.startFetches(ctx, opts, nil)
	}
	cache, err := materialize.OpenCache(ctx, e.layout.CacheDir(), opts.WaitTime(), opts.Check())
	if IsLocked(err) {
		early.end()
		return nil, fmt.Errorf("another sync holds the cache: %w", err)
	}
	if err != nil {
		early.end()
		return nil, err
	}
	defer cache.Close()
	// The lock file is read under the cache's lock: a sync that waited
	// for another one sees the lock that one wrote.
	locked, hasLock, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		early.end()
		return nil, err
	}
	run := &syncRun{e: e, opts: opts, hasLock: hasLock, early: early, Run: syncrun.Run{Lock: locked, Cache: cache, Report: syncrun.NewReport()}}
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
	// early are the sources opened and fetching before the cache was
	// opened; nil when the lock pins them, and do opens them.
	early *fetches
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
		r.early.end()
		return nil, err
	}
	f := r.early
	if f == nil {
		f = e.startFetches(ctx, r.opts, r.Lock)
	}
	// Every fetch has ended before the sources are closed; a sync that
	// stops early stops them.
	defer f.end()
	if !r.opts.Verify {
		// A skill whose git tree did not change is taken from its
		// record; a sync that verifies reads everything again.
		f.answer(r.Cache, e)
		f.readAhead(&r.Run)
	}
	// The usage is read while the sources fetch; a usage file that stops
	// the sync stops them too.
	if r.Usage, err = r.LoadUsage(e.Usage()); err != nil {
		return nil, err
	}
	for _, s := range f.sources {
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

// fetches are a sync's sources, opened, and the fetches of those with a
// local copy, under way (syncrun.Start): each source is materialized as
// soon as its own fetch is done.
type fetches struct {
	sources []*sourceRun
	// late gives each source's discovery the cache's answers, once
	// answer has them (Options.Late); in the order of sources.
	late []*lateAnswers
	// pending and names are the fetching sources' fetches and names.
	pending []*syncrun.Pending
	names   []string
	stop    context.CancelFunc
	// wait waits for every fetch, and for the reads ahead of the cache's
	// records that readAhead started.
	wait func()
}

// startFetches opens every configured source, each git source pinned to
// its revision in pins where the options say so (pins nil: none is),
// and starts the fetches of those with a local copy, jobs at a time; it
// returns at once.
func (e *Engine) startFetches(ctx context.Context, opts SyncOptions, pins *lock.File) *fetches {
	ctx, stop := context.WithCancel(ctx)
	f := &fetches{stop: stop}
	var fetchers []repository.Fetcher
	var runs []*sourceRun
	for _, s := range e.cfg.Sources {
		sp := e.spec(s, pinnedRevision(pins, s.Name, opts))
		late := &lateAnswers{}
		sp.Options.Late = late.give
		repo, err := e.kinds.Open(sp)
		run := &sourceRun{cfg: s, repo: repo, broken: err}
		f.sources, f.late = append(f.sources, run), append(f.late, late)
		if fetcher, ok := repo.(repository.Fetcher); ok {
			fetchers, runs = append(fetchers, fetcher), append(runs, run)
		}
	}
	pending, fetched := syncrun.Start(ctx, fetchers, opts.Jobs, opts.Offline)
	for i, p := range pending {
		runs[i].fetch = p
		f.names = append(f.names, runs[i].cfg.Name)
	}
	f.pending, f.wait = pending, fetched
	return f
}

// pinnedRevision is the revision pins holds of source where the options
// pin it to the lock (sync --frozen; --locked but for the sources it
// moves), "" where they do not or pins is nil.
func pinnedRevision(pins *lock.File, source string, opts SyncOptions) string {
	if pins == nil || !(opts.Frozen || (opts.Locked && !slices.Contains(opts.Move, source))) {
		return ""
	}
	if pinned, ok := pins.Sources[source]; ok {
		return pinned.Revision
	}
	return ""
}

// answer gives every source's discovery what the cache recorded of it
// (materialize.Cache.Answers), once the cache holds the renamed sources
// under their new names.
func (f *fetches) answer(c *materialize.Cache, e *Engine) {
	for i, s := range f.sources {
		give := c.Answers(s.cfg.Name, e.discovery(s.cfg))
		f.late[i].answers.Store(&give)
	}
}

// readAhead reads the records of every source whose fetch brings a new
// revision while the others are synced (syncrun.Run.ReadAhead); end
// waits for those reads.
func (f *fetches) readAhead(r *syncrun.Run) {
	ahead, fetched := r.ReadAhead(f.pending, f.names), f.wait
	f.wait = func() {
		fetched()
		ahead()
	}
}

// end stops the fetches still under way, waits for them all and closes
// what the sources hold (a database's connections and spool). A nil f
// has nothing to end.
func (f *fetches) end() {
	if f == nil {
		return
	}
	f.stop()
	f.wait()
	for _, s := range f.sources {
		if s.repo != nil {
			closeRepository(s.repo)
		}
	}
}

// lateAnswers hands a source opened before the cache the cache's answers
// to its discovery (Options.Late): none until answer has set them, and
// every discovery comes after that.
type lateAnswers struct {
	answers atomic.Pointer[func(*repository.Options)]
}

func (l *lateAnswers) give(opts *repository.Options) {
	if give := l.answers.Load(); give != nil {
		(*give)(opts)
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
