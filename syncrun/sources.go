package syncrun

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// Source is one configured source through a sync: opened, or why it
// could not be, and its fetch under way.
type Source struct {
	Config config.Source
	Repo   repository.Repository
	// Broken is why the source could not even be opened; it then fails
	// alone and keeps its last good files.
	Broken error
	// Fetch is the source's fetch under way, nil for a source read in
	// place.
	Fetch *Pending
	// answers are the cache's answers to its discovery, once Answer has
	// them (repository.Options.Late).
	answers atomic.Pointer[func(*repository.Options)]
}

// late gives the source's discovery the cache's answers, none before
// Sources.Answer set them; every discovery comes after that.
func (s *Source) late(opts *repository.Options) {
	if give := s.answers.Load(); give != nil {
		(*give)(opts)
	}
}

// Sources are a sync's sources, opened, and the fetches of those with a
// local copy under way (Start): each source is materialized as soon as
// its own fetch is done.
type Sources struct {
	List []*Source
	// pending and names are the fetching sources' fetches and names.
	pending []*Pending
	names   []string
	stop    context.CancelFunc
	// wait waits for every fetch, and for the reads ahead of the cache's
	// records that ReadAhead started.
	wait func()
}

// Opener opens a configured source, pinned to rev ("" for none), its
// discovery to take the options late completes (repository.Options.Late).
type Opener func(s config.Source, rev string, late func(*repository.Options)) (repository.Repository, error)

// Open opens every one of configured with open, each pinned to its
// revision in pins where opts say so (pins nil: none is), and starts the
// fetches of those with a local copy, opts.Jobs at a time; it returns at
// once. A sync whose sources the lock does not pin opens them before it
// takes the cache's lock: the fetch is the longest of what it does
// before it materializes, and needs neither the cache nor the lock.
func Open(ctx context.Context, configured []config.Source, pins *lock.File, opts Options, open Opener) *Sources {
	ctx, stop := context.WithCancel(ctx)
	all := &Sources{stop: stop}
	var fetchers []repository.Fetcher
	var fetching []*Source
	for _, c := range configured {
		s := &Source{Config: c}
		s.Repo, s.Broken = open(c, pinned(pins, c.Name, opts), s.late)
		all.List = append(all.List, s)
		if f, ok := s.Repo.(repository.Fetcher); ok {
			fetchers, fetching = append(fetchers, f), append(fetching, s)
		}
	}
	pending, fetched := Start(ctx, fetchers, opts.Jobs, opts.Offline)
	for i, p := range pending {
		fetching[i].Fetch = p
		all.names = append(all.names, fetching[i].Config.Name)
	}
	all.pending, all.wait = pending, fetched
	return all
}

// pinned is the revision pins holds of source where opts pin it to the
// lock (--frozen; --locked but for the sources it moves), "" where they
// do not or pins is nil.
func pinned(pins *lock.File, source string, opts Options) string {
	if pins == nil || !(opts.Frozen || (opts.Locked && !slices.Contains(opts.Move, source))) {
		return ""
	}
	if p, ok := pins.Sources[source]; ok {
		return p.Revision
	}
	return ""
}

// Answer gives every source's discovery what the cache recorded of it
// (materialize.Cache.Answers), discovery naming each source's discovery
// settings: called once the cache holds renamed sources under their new
// names, before any source is materialized.
func (all *Sources) Answer(c *materialize.Cache, discovery func(config.Source) string) {
	for _, s := range all.List {
		give := c.Answers(s.Config.Name, discovery(s.Config))
		s.answers.Store(&give)
	}
}

// ReadAhead reads the records of every source whose fetch brings a new
// revision while the others are synced (Run.ReadAhead); End waits for
// those reads.
func (all *Sources) ReadAhead(r *Run) {
	ahead, fetched := r.ReadAhead(all.pending, all.names), all.wait
	all.wait = func() {
		fetched()
		ahead()
	}
}

// End stops the fetches still under way, waits for every one and for
// the reads ahead, and closes what the sources hold (a database's
// connections and spool). A nil Sources has nothing to end.
func (all *Sources) End() {
	if all == nil {
		return
	}
	all.stop()
	all.wait()
	for _, s := range all.List {
		repository.Close(s.Repo)
	}
}
