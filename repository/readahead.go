package repository

import (
	"context"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ConcurrentFS is an fs.FS whose reads may run on several goroutines at
// once. Discovery then reads skills ahead of its walk, side by side, and
// the walk takes what they found in its own order; Options.Known is then
// asked from several goroutines too. A type that embeds a ConcurrentFS
// (a *DirFS, a *git.TreeFS) inherits the mark: one that keeps state of
// its own must hide it (a field named ConcurrentReads does) or guard it.
type ConcurrentFS interface {
	fs.FS
	// ConcurrentReads marks the FS; it does nothing.
	ConcurrentReads()
}

// readAhead reads, on other goroutines, the skills a walk is about to
// load: their SKILL.md and the listing of their files. The walk stays
// the one that decides: it takes a skill read ahead only when the
// entries its listing spent still fit the source's budget, and reads it
// itself otherwise, so what discovery finds, reports and charges is what
// a walk alone gives. The reads ahead charge a budget of their own, the
// source's max_entries, so a hostile source costs at most twice it.
type readAhead struct {
	d       *discovery // only its fsys and opts are read here
	ctx     context.Context
	stop    context.CancelFunc
	workers chan struct{}
	group   sync.WaitGroup
	spent   atomic.Int64

	mu     sync.Mutex
	skills map[string]*aheadSkill // by directory
	// jobs hands a skill to read to a reader; readers is how many have
	// started (at most cap(workers)).
	jobs    chan aheadJob
	readers int
}

// aheadJob is a skill for a reader: its directory and name, and where
// the read goes.
type aheadJob struct {
	dir string
	a   *aheadSkill
}

// aheadSkill is a skill being read ahead; done is closed when loaded is
// set (nil when the directory holds no skill or the read did not end).
type aheadSkill struct {
	name   string
	done   chan struct{}
	loaded *loaded
}

// passed marks a directory the walk has reached.
var passed = &aheadSkill{}

// newReadAhead returns a readAhead for d, or nil when d's FS may not be
// read from several goroutines.
func newReadAhead(ctx context.Context, d *discovery) *readAhead {
	if _, ok := d.fsys.(ConcurrentFS); !ok {
		return nil
	}
	ctx, stop := context.WithCancel(ctx)
	n := max(1, min(4, runtime.GOMAXPROCS(0)))
	return &readAhead{d: d, ctx: ctx, stop: stop, workers: make(chan struct{}, n), skills: map[string]*aheadSkill{}, jobs: make(chan aheadJob)}
}

// children starts reading ahead the subdirectories of dir, in order,
// that the walk will enter and that Options.Known does not answer for.
func (r *readAhead) children(dir string, entries []fs.DirEntry) {
	if r == nil {
		return
	}
	r.group.Go(func() {
		// A panic in Options.Known ends the reads ahead; the walk asks
		// it again on its own goroutine, where the caller can recover.
		defer func() { _ = recover() }()
		for _, e := range entries {
			name := e.Name()
			if skipsDir(name) || !e.IsDir() || r.known(entryKey(e)) {
				continue
			}
			select {
			case r.workers <- struct{}{}:
			case <-r.ctx.Done():
				return
			}
			a := &aheadSkill{name: name, done: make(chan struct{})}
			child := path.Join(dir, name)
			r.mu.Lock()
			_, dup := r.skills[child]
			if !dup {
				r.skills[child] = a
			}
			r.mu.Unlock()
			if dup {
				<-r.workers
				continue
			}
			r.hand(aheadJob{child, a})
		}
	})
}

// hand gives job to a reader, starting one while fewer than the workers
// allowed have started: a reader reads skill after skill on one
// goroutine, whose stack has grown by the first, where a goroutine for
// each skill grew its stack again for every skill. The caller holds a
// worker slot, so a reader is free or about to be.
func (r *readAhead) hand(job aheadJob) {
	r.mu.Lock()
	start := r.readers < cap(r.workers)
	if start {
		r.readers++
	}
	r.mu.Unlock()
	if start {
		r.group.Go(func() { r.reader(job) })
		return
	}
	select {
	case r.jobs <- job:
	case <-r.ctx.Done():
		<-r.workers
		close(job.a.done)
	}
}

// reader reads the skill of job, then of every job handed to it, until
// the reads ahead stop.
func (r *readAhead) reader(job aheadJob) {
	for {
		r.readOne(job)
		select {
		case job = <-r.jobs:
		case <-r.ctx.Done():
			return
		}
	}
}

// readOne reads one skill ahead and gives back its worker slot.
func (r *readAhead) readOne(job aheadJob) {
	a := job.a
	defer func() { <-r.workers }()
	defer close(a.done)
	// A panic (a reader's bug, hostile input) leaves the skill to the
	// walk, which reads it again on its own goroutine: a panic there
	// reaches Scan's caller, as without reading ahead.
	defer func() {
		if recover() != nil {
			a.loaded = nil
		}
	}()
	a.loaded = r.read(job.dir, a.name)
}

// known reports whether Options.Known answers for the directory key.
func (r *readAhead) known(key string) bool {
	if r.d.opts.Known == nil || !strings.HasPrefix(key, TreeKeyPrefix) {
		return false
	}
	if r.d.opts.Knows != nil {
		return r.d.opts.Knows(key)
	}
	_, _, ok := r.d.opts.Known(key)
	return ok
}

// read loads the skill at dir, or returns nil when dir holds none or
// the read ended early (the budget of the reads ahead, ctx).
func (r *readAhead) read(dir, name string) *loaded {
	charge := func(n int, _ string) error {
		if r.spent.Add(int64(n)) > int64(r.d.maxEntries) {
			return errBudget
		}
		return nil
	}
	// A folder that is no skill costs a stat or two, not a listing: a
	// source walked whole may have thousands.
	if !hasSkillFile(r.d.fsys, dir) {
		return nil
	}
	entries, err := readDir(r.ctx, r.d.fsys, dir, dir, charge)
	if err != nil || !slices.ContainsFunc(entries, isSkillFile) {
		return nil
	}
	l := r.d.readSkill(r.ctx, dir, name, charge)
	if l.stop != nil || r.ctx.Err() != nil {
		return nil
	}
	return l
}

// hasSkillFile reports whether dir may hold a SKILL.md or skill.md; the
// listing then says for sure, by exact name.
func hasSkillFile(fsys fs.FS, dir string) bool {
	for _, name := range []string{"SKILL.md", "skill.md"} {
		if _, err := fs.Stat(fsys, path.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// take returns what was read ahead of the skill at dir named name,
// waiting for it, or nil when it was not read ahead.
func (r *readAhead) take(ctx context.Context, dir, name string) *loaded {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	a := r.skills[dir]
	// Left in place, so a read ahead not yet started is not started
	// for a skill the walk reads itself.
	r.skills[dir] = passed
	r.mu.Unlock()
	if a == nil || a == passed || a.name != name {
		return nil
	}
	select {
	case <-a.done:
		return a.loaded
	case <-ctx.Done():
		return nil
	}
}

// close stops the reads ahead and waits for them.
func (r *readAhead) close() {
	if r == nil {
		return
	}
	r.stop()
	r.group.Wait()
}
