package syncrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/materialize"
)

// SyncsVersion is the version of the cache's materialize.SyncsName this
// skillsync reads and writes.
const SyncsVersion = 1

// maxSyncsSize bounds what ReadSyncs reads: a few hundred bytes a
// source, so a file past it is not one a sync wrote.
const maxSyncsSize = 1 << 20

// Syncs is the cache's materialize.SyncsName: how each source fared in
// the syncs of the workspace, so that skillsync status can tell a failing
// source without a daemon, whose state file only its own syncs fill.
type Syncs struct {
	Version int                    `json:"version"`
	Sources map[string]SourceSyncs `json:"sources"`
}

// SourceSyncs is how one source fared, in the daemon state's terms
// (daemon.SourceState), so that status weighs the two alike.
type SourceSyncs struct {
	// LastAttempt is when a sync last tried the source; LastSuccess when
	// one last brought it in without an error.
	LastAttempt *time.Time `json:"last_attempt,omitempty"`
	LastSuccess *time.Time `json:"last_success,omitempty"`
	// LastError is why the last try failed; "" when it did not.
	LastError string `json:"last_error,omitempty"`
}

// ErrSyncsVersion is wrapped by ReadSyncs' error for a file of a version
// this skillsync does not read.
var ErrSyncsVersion = errors.New("unknown version")

// ReadSyncs reads the file at path as a workspace's file is read: no
// symbolic link followed, its size bounded, its version checked. A
// missing file is an empty Syncs and no error. Every error names path.
func ReadSyncs(path string) (*Syncs, error) {
	data, err := atomicfile.ReadBounded(path, maxSyncsSize)
	return parseSyncs(path, data, err)
}

// parseSyncs is ReadSyncs of what reading the file at path gave.
func parseSyncs(path string, data []byte, err error) (*Syncs, error) {
	s := &Syncs{Version: SyncsVersion, Sources: map[string]SourceSyncs{}}
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read the record of syncs %s: %w", path, err)
	}
	var got Syncs
	if err := json.Unmarshal(data, &got); err != nil {
		return s, fmt.Errorf("read the record of syncs %s: %w", path, &jsonfile.CorruptError{Path: path, Err: err})
	}
	if got.Version != SyncsVersion {
		return s, fmt.Errorf("read the record of syncs %s: %w %d, this skillsync reads version %d (a newer skillsync wrote it?)",
			path, ErrSyncsVersion, got.Version, SyncsVersion)
	}
	if got.Sources == nil {
		got.Sources = map[string]SourceSyncs{}
	}
	return &got, nil
}

// Source returns what s knows of the named source; false when s is nil
// or knows nothing of it.
func (s *Syncs) Source(name string) (SourceSyncs, bool) {
	if s == nil {
		return SourceSyncs{}, false
	}
	src, ok := s.Sources[name]
	return src, ok
}

// RecordSyncs notes, in the cache's materialize.SyncsName, how each
// source of the report fared at now, for skillsync status. It must run
// while the sync holds the cache's lock: two syncs would otherwise each
// keep what the other overwrote. err is what the sync returned: one the
// sources do not account for (the cache, a frozen mismatch) succeeds no
// source, as the daemon counts it (DaemonResult), but for a target
// refused (materialize.IsRefused): a sync refuses one only once the
// cache and the lock took in the sources, so each source that did not
// fail did sync, and status says so beside the refusal. A source
// the sync kept at its locked revision was not tried, and an offline
// sync tries none. Failing to record fails nothing: it is a warning, as
// is a record that could not be read, which is written anew.
func (r *Run) RecordSyncs(now time.Time, opts Options, err error) {
	if opts.Offline || len(r.Report.Sources) == 0 {
		return
	}
	// Read and written in the cache's folder as the cache holds it open
	// and locked: a .skills-cache swapped for a link since is not
	// followed.
	path := filepath.Join(r.Cache.Root(), materialize.SyncsName)
	data, rerr := r.Cache.ReadFile(materialize.SyncsName, maxSyncsSize)
	prev, rerr := parseSyncs(path, data, rerr)
	// A record of another version is written anew too: it holds only
	// times and errors the next syncs tell again, and one left alone would
	// keep status asking a person for it.
	switch {
	case errors.Is(rerr, atomicfile.ErrSymlink):
		// The cache is skillsync's: a link in it is removed, never followed.
		if err := r.Cache.RemoveFile(materialize.SyncsName); err != nil {
			r.Report.Warnings = append(r.Report.Warnings, fmt.Sprintf("remove the link %s: %v", path, err))
			return
		}
		r.Report.Warnings = append(r.Report.Warnings, rerr.Error()+": removed, not followed, and written anew")
	case rerr != nil:
		r.Report.Warnings = append(r.Report.Warnings, rerr.Error()+"; it is written anew")
	}
	whole := err != nil && !errors.Is(err, ErrPartial) && !errors.Is(err, ErrFailed) && !materialize.IsRefused(err)
	next := &Syncs{Version: SyncsVersion, Sources: map[string]SourceSyncs{}}
	for _, s := range r.Report.Sources {
		next.Sources[s.Source] = prev.Sources[s.Source]
	}
	if opts.Locked {
		// The sources this sync kept at their locked revisions keep what
		// an earlier sync found.
		for name, s := range prev.Sources {
			next.Sources[name] = s
		}
	}
	at := now.UTC()
	for _, s := range r.Report.Sources {
		if opts.Locked && !slices.Contains(opts.Move, s.Source) {
			continue
		}
		rec := next.Sources[s.Source]
		rec.LastAttempt, rec.LastError = &at, s.Error
		if s.Error == "" && !whole {
			rec.LastSuccess = &at
		}
		next.Sources[s.Source] = rec
	}
	if rerr == nil && sameSyncs(prev, next, at) {
		// A daemon's no-op syncs come every few minutes, and a sync with
		// nothing new writes nothing else: the times move once an hour.
		return
	}
	if err := r.Cache.WriteJSON(materialize.SyncsName, next, 0o644); err != nil {
		r.Report.Warnings = append(r.Report.Warnings, fmt.Sprintf("record the sync for skillsync status: %v", err))
	}
}

// syncsRefresh is how old the times of a source's record may grow before
// a sync whose outcome is the recorded one writes them anew.
const syncsRefresh = time.Hour

// sameSyncs reports whether next, made at at, tells what prev does but
// for times under syncsRefresh old: the same sources, each with the same
// error, and a success recorded where this sync had one.
func sameSyncs(prev, next *Syncs, at time.Time) bool {
	recent := func(t *time.Time) bool { return t != nil && !t.After(at) && at.Sub(*t) < syncsRefresh }
	if len(prev.Sources) != len(next.Sources) {
		return false
	}
	for name, n := range next.Sources {
		p, ok := prev.Sources[name]
		switch {
		case !ok || p.LastError != n.LastError:
			return false
		case n.LastAttempt != nil && n.LastAttempt.Equal(at) && !recent(p.LastAttempt):
			return false
		case n.LastSuccess != nil && n.LastSuccess.Equal(at) && !recent(p.LastSuccess):
			return false
		}
	}
	return true
}
