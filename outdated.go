package skillsync

import (
	"context"

	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// Outdated is how far one source is behind its upstream.
type Outdated = lock.Outdated

// Outdated compares every source's locked revision with its upstream and,
// for each source that moved, lists the skills an update would add, change
// and remove (lock.File.Outdated). The workspace (config, cache, lock,
// targets) is not changed. One source's error is its report's Error; the
// others go on.
func (e *Engine) Outdated(ctx context.Context) ([]Outdated, error) {
	locked, _, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		return nil, err
	}
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return nil, err
	}
	return locked.Outdated(ctx, m, sourceNames(e.cfg.Sources), func(name string) (repository.Repository, error) {
		s, _ := e.source(name)
		return e.open(s, "")
	}), nil
}
