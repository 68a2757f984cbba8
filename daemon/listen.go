package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

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

// Listen watches every push source of eng for changes as they commit, and
// calls changed with the source's name when one has a revision the cache
// does not hold yet (so a change the last sync already brought in is not
// reported again). It is meant to trigger a sync of that source: a daemon
// that calls it syncs within a second of a publish instead of at its next
// scheduled time.
//
// Each source holds a connection of its own. A lost connection is
// retried with a backoff (the source's Listen does) and the source is
// checked again once it is back, so a change made meanwhile is reported
// then; until then the caller's schedule is what syncs it. changed may be
// called from several goroutines, one source at a time.
//
// Listen returns when ctx ends, having closed its connections. It returns
// at once, nil, when eng has no push source. Its error joins those of the
// sources that could not listen at all (a connection string that cannot
// be read); they were logged as they happened.
func Listen(ctx context.Context, eng Engine, opts ListenOptions, changed func(source string)) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	debounce := opts.Debounce
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	sources := eng.PushSources()
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	for i, name := range sources {
		l, err := eng.OpenListener(name, func(msg string) {
			log.Warn("lost the connection that listens for changes; the schedule syncs the source until it is back",
				"source", name, "error", msg)
		})
		if err != nil {
			errs[i] = err
			log.Error("cannot listen for changes", "source", name, "error", err.Error())
			continue
		}
		if l == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer repository.Close(l)
			if err := listenOne(ctx, eng, l, debounce, log, changed); err != nil {
				errs[i] = err
				log.Error("stopped listening for changes; the schedule syncs the source", "source", name, "error", err.Error())
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// listenOne runs one source's listener until ctx ends; it returns an error
// only when the source cannot listen at all.
func listenOne(ctx context.Context, eng Engine, pg repository.Listener, debounce time.Duration, log *slog.Logger, changed func(string)) error {
	name := pg.Source()
	var (
		mu      sync.Mutex
		timer   *time.Timer // armed: a report is due
		latest  string      // the newest revision seen
		stopped bool        // listenOne returned: no report may follow
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
		if !done && ctx.Err() == nil && eng.CachedRevision(name) != rev {
			changed(name)
		}
	}
	first := true
	err := pg.Listen(ctx, func(rev repository.Revision) {
		if first {
			log.Info("listening for changes", "source", name, "revision", string(rev))
			first = false
		}
		if eng.CachedRevision(name) == string(rev) {
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

// pushWatch runs Listen over the current engine and triggers a source's
// push job when it changes; each reload replaces it.
type pushWatch struct {
	log      *slog.Logger
	debounce time.Duration
	cancel   context.CancelFunc
	done     chan struct{}
}

// restart stops the listeners of the previous engine, if any, and starts
// those of eng, until ctx ends.
func (w *pushWatch) restart(ctx context.Context, eng Engine, d *Daemon) {
	w.stop()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	w.cancel, w.done = cancel, done
	go func() {
		defer close(done)
		_ = Listen(ctx, eng, ListenOptions{Logger: w.log, Debounce: w.debounce}, func(source string) {
			triggerPush(ctx, d, PushJob(source), w.log)
		})
	}()
}

// stop ends the listeners and waits for their connections to close.
func (w *pushWatch) stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.cancel, w.done = nil, nil
}

// triggerPush runs job now. Load starts the listeners just before the
// daemon installs the jobs it returned, so a change reported in between
// finds no job yet: it is tried again for a moment before it is logged.
func triggerPush(ctx context.Context, d *Daemon, job string, log *slog.Logger) {
	for attempt := 0; ; attempt++ {
		err := d.Trigger(job)
		if err == nil {
			return
		}
		if attempt == 20 {
			log.Error("cannot sync a changed source; the schedule will", "job", job, "error", err.Error())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
