package mcp

import (
	"context"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watched is what a Workspace may add so that Watch hears of a change
// when it happens instead of at its next poll: the directories whose
// entries change when the catalog does (the cache, where a sync replaces
// the manifest; each layer read in place, where promotion adds a skill and
// curation archives one).
type Watched interface {
	WatchDirs() []string
}

// Watch tells connected clients that the catalog changed, within about a
// second of a sync, a promotion or a curation, without waiting for their
// next request: it reads the workspace's stamp when a watched directory
// changes and every pollEvery otherwise, and on a new stamp re-reads the
// catalog, which sends notifications/resources/list_changed and
// notifications/prompts/list_changed. Without file notifications (no
// Watched, or the system refused a watch) it polls every fallbackEvery.
// It returns when ctx ends.
func (s *Server) Watch(ctx context.Context) {
	events, closeWatch := s.watchDirs()
	defer closeWatch()
	every := pollEvery
	if events == nil {
		every = fallbackEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-events:
			// A sync writes several files in a row: let it finish.
			if !sleep(ctx, settle) {
				return
			}
			drain(events)
		}
		s.check(ctx)
	}
}

const (
	// pollEvery catches what the watched directories do not show (an
	// edit deep inside a skill read in place).
	pollEvery = 5 * time.Second
	// fallbackEvery is the poll when nothing is watched: the one-second
	// promise then rests on it.
	fallbackEvery = 500 * time.Millisecond
	// settle is how long Watch waits after an event before it looks.
	settle = 100 * time.Millisecond
)

// check reads the stamp now, whatever StampEvery says, and reloads the
// catalog when it moved.
func (s *Server) check(ctx context.Context) {
	if _, err := s.look(ctx); err != nil {
		s.log.Warn("cannot read the catalog", "err", err)
	}
}

// watchDirs starts file notifications on the workspace's directories. The
// channel is nil when there is nothing to watch or no watch could be set.
func (s *Server) watchDirs() (<-chan struct{}, func()) {
	wd, ok := s.ws.(Watched)
	if !ok {
		return nil, func() {}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn("no file notifications; polling for changes", "err", err)
		return nil, func() {}
	}
	watched := 0
	for _, dir := range wd.WatchDirs() {
		// A directory that does not exist yet (no cache before the first
		// sync) is caught by the poll.
		if w.Add(dir) == nil {
			watched++
		}
	}
	if watched == 0 {
		w.Close()
		return nil, func() {}
	}
	out := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				select {
				case out <- struct{}{}:
				default:
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return out, func() { w.Close(); <-done }
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
