package skillsync

import (
	"cmp"
	"context"
	"errors"

	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
)

// Verify hashes the cache and the targets again and compares them with
// the manifest, the target records and skillsync.lock (lock.File.Verify).
// It changes nothing.
func (e *Engine) Verify(ctx context.Context) ([]materialize.Difference, error) {
	locked, ok, lerr := lock.Read(e.layout.LockFile(), e.kinds)
	if lerr != nil || !ok {
		locked = nil
	}
	diffs, err := locked.Verify(ctx, e.layout.CacheDir(), e.targetDirs())
	if err != nil {
		return nil, err
	}
	return diffs, lerr
}

// Repaired is what Repair found and what it left.
type Repaired struct {
	// Found are the differences before the repair.
	Found []materialize.Difference
	// Left are the differences after it: none when the repair worked.
	Left []materialize.Difference
	// Sync is the report of the sync that rewrote them; nil when there
	// was nothing to repair.
	Sync *SyncReport
}

// Repair verifies the cache and the targets and, when anything differs,
// rewrites it at the locked revisions, hashing every cached file and
// trusting no stat data, then verifies again.
func (e *Engine) Repair(ctx context.Context, opts SyncOptions) (*Repaired, error) {
	found, err := e.Verify(ctx)
	if err != nil || len(found) == 0 {
		return &Repaired{Found: found}, err
	}
	opts.Verify, opts.Locked, opts.Move = true, true, nil
	report, err := e.Sync(ctx, opts)
	out := &Repaired{Found: found, Sync: report}
	if err != nil && !errors.Is(err, ErrPartial) {
		return out, err
	}
	left, verr := e.Verify(ctx)
	out.Left = left
	return out, cmp.Or(verr, err)
}

// targetDirs are the configured targets' folders.
func (e *Engine) targetDirs() []string {
	dirs := make([]string, len(e.cfg.Targets))
	for i, t := range e.cfg.Targets {
		dirs[i] = t.Dir
	}
	return dirs
}
