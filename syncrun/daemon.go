package syncrun

import (
	"errors"
	"maps"
	"slices"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/materialize"
)

// PartlyWhy is what the daemon and status say of a source a sync brought
// in part: the sync's own report names each skill and why.
const PartlyWhy = "the last sync could not bring all of it; skillsync sync says why"

// DaemonResult is r as the daemon counts and logs a sync that returned
// err. cacheDir is the cache the sync wrote (whether it is left dirty,
// which skills it holds of each source); usage is the workspace's, nil
// when unreadable (every skill then counts as active); target names a
// target's folder for the metrics. An err the sources do not account for
// (not ErrPartial or ErrFailed: a target, the cache, a stop) is the
// result's Err.
func (r *Report) DaemonResult(cacheDir string, usage *curator.Usage, target func(dir string) string, err error) *daemon.SyncResult {
	res := &daemon.SyncResult{Added: len(r.Skills.Added), Updated: len(r.Skills.Updated), Removed: len(r.Skills.Removed), Repaired: len(r.Skills.Repaired),
		FilesWritten: r.Files.Written, BytesWritten: r.Files.BytesWritten, Warnings: r.Warnings, Conflicts: map[string]int{},
		CacheDirty: materialize.Dirty(cacheDir)}
	if err != nil && !errors.Is(err, ErrPartial) && !errors.Is(err, ErrFailed) {
		res.Err, res.Refused = err.Error(), materialize.IsRefused(err)
	}
	for _, t := range r.Targets {
		// A conflict left in place is counted as it appears, not again at
		// every sync while it stands.
		res.Conflicts[target(t.Dir)] += len(t.Conflicts) - t.Standing + len(t.Preserved)
	}
	m, err := materialize.ReadManifest(cacheDir)
	if err != nil {
		m = materialize.NewManifest()
	}
	for _, s := range r.Sources {
		var cached []string
		if rec := m.Sources[s.Source]; rec != nil {
			cached = slices.Collect(maps.Keys(rec.Skills))
		}
		sr := daemon.SourceResult{Name: s.Source, Revision: s.Revision, Err: s.Error,
			FetchDuration: s.FetchTime, FetchBytes: s.Brought, Skills: curator.CountStates(usage, s.Source, cached)}
		if s.Status == StatusPartial && s.Error == "" {
			sr.Partial = PartlyWhy
		}
		res.Sources = append(res.Sources, sr)
	}
	return res
}
