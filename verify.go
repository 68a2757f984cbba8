package skillsync

import (
	"cmp"
	"context"
	"errors"

	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/syncrun"
)

// Verify hashes the cache and the targets again and compares them with
// the manifest, the target records and skillsync.lock (lock.File.Verify);
// a configured source the cache never held differs too (Unsynced), and a
// target a sync refuses for a link is unread (Verifiable). Changes nothing.
func (e *Engine) Verify(ctx context.Context) ([]materialize.Difference, error) {
	locked, ok, lerr := lock.Read(e.layout.LockFile(), e.kinds)
	if lerr != nil || !ok {
		locked = nil
	}
	dirs, refused := e.places(SyncOptions{}).Verifiable(e.targetDirs())
	diffs, err := locked.Verify(ctx, e.layout.CacheDir(), sourceNames(e.cfg.Sources), dirs)
	if corrupt := (*jsonfile.CorruptError)(nil); errors.As(err, &corrupt) {
		// A difference to repair, as a sync does, not the end of verify.
		return []materialize.Difference{{Path: corrupt.Path, Kind: materialize.Corrupt}}, lerr
	}
	if err != nil {
		return nil, err
	}
	return append(diffs, refused...), lerr
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
	if err != nil && !errors.Is(err, ErrPartial) && !errors.Is(err, ErrFailed) {
		return out, err // what is left is not known
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

// Outdated is how far one source is behind its upstream.
type Outdated = lock.Outdated

// Outdated compares every source's locked revision with its upstream and,
// for each source that moved, lists the skills an update would add, change
// and remove (lock.File.Outdated). The workspace (config, cache, lock,
// targets) is not changed. One source's error is its report's Error; the
// others go on, and the error is ErrPartial (some could not be checked)
// or ErrFailed (none could).
func (e *Engine) Outdated(ctx context.Context) ([]Outdated, error) {
	locked, _, err := lock.Read(e.layout.LockFile(), e.kinds)
	if err != nil {
		return nil, err
	}
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return nil, err
	}
	out := locked.Outdated(ctx, m, sourceNames(e.cfg.Sources), func(name string) (repository.Repository, error) {
		s, _ := e.source(name)
		return e.open(s, "")
	})
	return out, syncrun.OutdatedErr(out)
}
