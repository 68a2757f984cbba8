package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
)

// holdEvery is how often a daemon looks at the workspace's lock: to take
// it once the daemon that held it stopped, and to take it anew when its
// file was removed (git clean) or replaced under it.
const holdEvery = 2 * time.Second

// hold is a daemon's claim on its workspace: whoever holds the lock file
// writes the state file skillsync status reads. A daemon that cannot take
// the lock (another holds it, or a reader held it that moment) tries
// again; two never both hold it, and one that runs comes to hold it.
type hold struct {
	path, stateFile string
	m               *monitor
	log             *slog.Logger
	mu              sync.Mutex
	lock            *flock.Lock
}

// take takes the lock unless this daemon holds it, saying what it found
// when first is set (the daemon's start).
func (h *hold) take(ctx context.Context, first bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lock.Holds(h.path) {
		return
	}
	if h.lock != nil {
		h.log.Warn("the workspace's daemon lock file was removed or replaced; taking it again", "lock", h.path)
		_ = h.lock.Close()
		h.lock = nil
		h.m.writeStateTo("")
	}
	l, err := holdWorkspace(ctx, h.path, first)
	switch {
	case err == nil:
		h.lock = l
		h.m.writeStateTo(h.stateFile)
		if !first {
			h.log.Info("this daemon holds the workspace now; skillsync status shows it", "lock", h.path)
		}
	case !first:
	case errors.Is(err, flock.ErrLocked):
		h.log.Warn("another daemon holds this workspace; skillsync status shows that one, and this one takes over when it stops", "error", err.Error())
	default:
		h.log.Warn("cannot hold the workspace's daemon lock; skillsync status will not see this daemon until it can", "error", err.Error())
	}
}

// keep takes the lock again every holdEvery until ctx ends, then lets it
// go; the returned func waits for that.
func (h *hold) keep(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(holdEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				h.mu.Lock()
				_ = h.lock.Close()
				h.mu.Unlock()
				return
			case <-t.C:
				h.take(ctx, false)
			}
		}
	}()
	return func() { <-done }
}

// holdWorkspace takes the daemon's lock on its workspace, making its
// folder when asked (at the start: once running, a folder that is gone
// is a workspace deleted, not one to make again).
func holdWorkspace(ctx context.Context, path string, mkdir bool) (*flock.Lock, error) {
	if mkdir {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
	}
	return flock.Acquire(ctx, path, 0)
}
