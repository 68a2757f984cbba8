package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/skillsync/skillsync"
)

// liveEngine is the engine of a command that stays up and reads the
// workspace (serve, mcp), built again from the config whenever its file
// changes (skillsync add or remove, an edit), as the daemon reloads its
// own: a source added while the server runs is served once it is synced,
// a skill hidden is hidden. Before, the config read at the start held
// until a restart. A config that no longer loads keeps the engine the
// last good one made, and says why once.
type liveEngine struct {
	load func() (*skillsync.Engine, error)
	warn func(format string, args ...any)
	// path is the config file, "" for the built-in default: nothing to
	// watch then.
	path string

	mu     sync.Mutex
	eng    *skillsync.Engine
	seen   fileStamp
	failed string // why the last reload failed, said once
}

// fileStamp is what tells that a file changed: a write in place moves
// its time or size, a write by rename its inode too (os.SameFile).
type fileStamp struct {
	info os.FileInfo
	mod  time.Time
	size int64
}

func stampFile(path string) fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{info: info, mod: info.ModTime(), size: info.Size()}
}

func (s fileStamp) same(o fileStamp) bool {
	if s.info == nil || o.info == nil {
		return s.info == nil && o.info == nil
	}
	return s.mod.Equal(o.mod) && s.size == o.size && os.SameFile(s.info, o.info)
}

// newLiveEngine starts with eng, made by load from the config at path.
func newLiveEngine(eng *skillsync.Engine, load func() (*skillsync.Engine, error), warn func(string, ...any)) *liveEngine {
	path := eng.Config().File
	l := &liveEngine{load: load, warn: warn, path: path, eng: eng}
	if path != "" {
		l.seen = stampFile(path)
	}
	return l
}

// get returns the engine of the config as its file is now: one stat a
// call, a reload when the file changed since the last.
func (l *liveEngine) get() *skillsync.Engine {
	if l.path == "" {
		return l.eng
	}
	now := stampFile(l.path)
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.same(l.seen) {
		return l.eng
	}
	l.seen = now
	eng, err := l.load()
	if err != nil {
		if why := err.Error(); why != l.failed {
			l.failed = why
			l.warn("%s changed and does not load (%v); serving the config as it was until it does", l.path, err)
		}
		return l.eng
	}
	l.eng, l.failed = eng, ""
	return eng
}

// stamp is a value that changes when the config file does, for a server
// that tells its clients when the catalog may have changed.
func (l *liveEngine) stamp() string {
	if l.path == "" {
		return ""
	}
	s := stampFile(l.path)
	return fmt.Sprintf("%d.%d", s.mod.UnixNano(), s.size)
}

// liveEngine is engine for a command that stays up (newLiveEngine).
func (a *app) liveEngine() (*liveEngine, error) {
	eng, err := a.engine()
	if err != nil {
		return nil, err
	}
	return newLiveEngine(eng, func() (*skillsync.Engine, error) { return a.engine() }, a.warn), nil
}
