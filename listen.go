package skillsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// DefaultDebounce is how long Listen gathers the changes of one source
// before it reports them: a burst of publishes is one sync, and a single
// publish still reaches the cache well within a second.
const DefaultDebounce = 200 * time.Millisecond

// ListenOptions configure Listen.
type ListenOptions struct {
	// Debounce is how long after a source's first unreported change
	// Listen reports it; the changes that come meanwhile are folded into
	// that one report. 0 is DefaultDebounce.
	Debounce time.Duration
	// Logger receives what happens to the connections: each source as it
	// starts listening, each lost connection and retry, each change. nil
	// discards.
	Logger *slog.Logger
}

// Listen watches every postgres source of the config for changes as they
// commit, and calls changed with the source's name when one has a
// revision the cache does not hold yet (so a change the last sync already
// brought in is not reported again). It is meant to trigger a sync of that
// source: a daemon that calls it syncs within a second of a publish
// instead of at its next scheduled time.
//
// Each source holds a connection of its own. A lost connection is
// retried with a backoff (see postgres.Postgres.Listen in repository/postgres) and the source
// is checked again once it is back, so a change made meanwhile is
// reported then; until then the caller's schedule is what syncs it.
// changed may be called from several goroutines, one source at a time.
//
// Listen returns when ctx ends, having closed its connections. It returns
// at once, nil, when the config has no postgres source. Its error joins
// those of the sources that could not listen at all (a connection string
// that cannot be read); they were logged as they happened.
func (e *Engine) Listen(ctx context.Context, opts ListenOptions, changed func(source string)) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	debounce := opts.Debounce
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	sources := e.pushSources()
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	for i, s := range sources {
		sp := e.spec(s, "")
		sp.Host.Logf = func(format string, args ...any) {
			log.Warn("lost the connection that listens for changes; the schedule syncs the source until it is back",
				"source", s.Name, "error", fmt.Sprintf(format, args...))
		}
		repo, err := e.kinds.Open(sp)
		if err != nil {
			errs[i] = err
			log.Error("cannot listen for changes", "source", s.Name, "error", err.Error())
			continue
		}
		l, ok := repo.(repository.Listener)
		if !ok {
			closeRepository(repo)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer closeRepository(repo)
			if err := e.listen(ctx, l, debounce, log, changed); err != nil {
				errs[i] = err
				log.Error("stopped listening for changes; the schedule syncs the source", "source", s.Name, "error", err.Error())
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// listen runs one source's listener until ctx ends; it returns an error
// only when the source cannot listen at all.
func (e *Engine) listen(ctx context.Context, pg repository.Listener, debounce time.Duration, log *slog.Logger, changed func(string)) error {
	name := pg.Source()
	var (
		mu      sync.Mutex
		timer   *time.Timer // armed: a report is due
		latest  string      // the newest revision seen
		stopped bool        // listen returned: no report may follow
	)
	defer func() {
		mu.Lock()
		stopped = true
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
	}()
	report := func() {
		mu.Lock()
		timer = nil
		rev, done := latest, stopped
		mu.Unlock()
		// A sync that ran meanwhile (the first one, a scheduled one) may
		// have brought the change in already.
		if !done && ctx.Err() == nil && e.cachedRevision(name) != rev {
			changed(name)
		}
	}
	first := true
	err := pg.Listen(ctx, func(rev repository.Revision) {
		if first {
			log.Info("listening for changes", "source", name, "revision", string(rev))
			first = false
		}
		if e.cachedRevision(name) == string(rev) {
			return
		}
		log.Info("source changed", "source", name, "revision", string(rev))
		mu.Lock()
		defer mu.Unlock()
		latest = string(rev)
		if timer == nil {
			timer = time.AfterFunc(debounce, report)
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// cachedRevision is the revision of source the cache holds, "" when it
// holds none or cannot be read: then every change is reported.
func (e *Engine) cachedRevision(source string) string {
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return ""
	}
	if rec, ok := m.Sources[source]; ok {
		return rec.Revision
	}
	return ""
}
