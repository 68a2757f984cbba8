package skillsync

import (
	"context"
	"fmt"
	"sort"

	"github.com/skillsync/skillsync/materialize"
)

// Verify hashes the cache and the targets again and compares them with
// the manifest, the target records and skillsync.lock. It changes nothing.
func (e *Engine) Verify(ctx context.Context) ([]materialize.Difference, error) {
	m, err := materialize.ReadManifest(e.CacheDir())
	if err != nil {
		return nil, err
	}
	diffs := materialize.VerifyCache(e.CacheDir(), m)
	for _, t := range e.cfg.Targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		td, err := materialize.VerifyTarget(t.Dir)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, td...)
	}
	lock, ok, err := ReadLock(e.cfg.Workspace)
	if err != nil || !ok {
		return diffs, err
	}
	diffs = append(diffs, compareLock(lock, m)...)
	return diffs, nil
}

// compareLock lists skills whose cached hash differs from the lock's.
func compareLock(lock *Lock, m *materialize.Manifest) []materialize.Difference {
	var diffs []materialize.Difference
	for source, ls := range lock.Sources {
		rec := m.Sources[source]
		for name, hash := range ls.Skills {
			path := fmt.Sprintf("%s/%s (%s)", source, name, LockFileName)
			switch {
			case rec == nil || rec.Skills[name] == nil:
				diffs = append(diffs, materialize.Difference{Path: path, Kind: "missing"})
			case rec.Skills[name].Hash.String() != hash:
				diffs = append(diffs, materialize.Difference{Path: path, Kind: "modified"})
			}
		}
		if rec == nil {
			continue
		}
		for name := range rec.Skills {
			if _, ok := ls.Skills[name]; !ok {
				diffs = append(diffs, materialize.Difference{Path: fmt.Sprintf("%s/%s (%s)", source, name, LockFileName), Kind: "extra"})
			}
		}
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].Path < diffs[j].Path })
	return diffs
}

// Repair rewrites whatever verify finds different, at the locked
// revisions: every cached file is hashed, none is trusted by its stat data.
func (e *Engine) Repair(ctx context.Context, opts SyncOptions) (*SyncReport, error) {
	opts.Verify = true
	if opts.Update == nil {
		opts.Update = []string{}
	}
	return e.Sync(ctx, opts)
}
