package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/flock"
)

// State is what a running daemon knows of its workspace: what /readyz
// and the per-source metrics report, and what it writes to its state file
// after every job for skillsync status. It is a snapshot, never changed
// once published.
type State struct {
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	// Listen is the address of the metrics and health server, if any.
	Listen string `json:"listen,omitempty"`
	// SyncEvery is the interval of the sync schedule (0: only triggered);
	// SyncSchedule the schedule, whose runs may be spaced unevenly
	// (business hours).
	SyncEvery    Seconds `json:"sync_every_seconds"`
	SyncSchedule string  `json:"sync_schedule,omitempty"`
	// Sources are the current config's sources, by name.
	Sources map[string]SourceState `json:"sources"`
	// CacheDirty is set when the last sync left the cache marked as
	// stopped halfway.
	CacheDirty bool `json:"cache_dirty"`
	// LastSyncError is why the last sync failed beyond what any one
	// source says (a target, the cache, a stop); "" when it did not.
	LastSyncError string `json:"last_sync_error,omitempty"`
	// LastSync is when a sync last ended without failing as a whole:
	// with no source to say so, it is what tells a workspace synced.
	LastSync *time.Time `json:"last_sync,omitempty"`
	// LastCurate and NextCurate are when curation last ran and runs next.
	LastCurate *time.Time `json:"last_curate,omitempty"`
	NextCurate *time.Time `json:"next_curate,omitempty"`
	// LastCurateError is why the last curation failed; "" when it did not.
	LastCurateError string `json:"last_curate_error,omitempty"`
	// LastImport is when the usage import (the job import, or the one
	// curation runs first) last ran without failing; LastImportError why
	// its last run failed, "" when it did not. Like a failed curation, a
	// failed import does not make the daemon not ready: no skill is
	// placed or kept from the agents by it.
	LastImport      *time.Time `json:"last_import,omitempty"`
	LastImportError string     `json:"last_import_error,omitempty"`
	// ReloadError is why the last reload failed (the config edited into
	// one that does not load): the daemon runs the config it read before,
	// one the user no longer has, until a reload takes. "" once one does.
	ReloadError string `json:"reload_error,omitempty"`
	// FleetPush is the last run of the fleet push job, when there is one.
	FleetPush *JobState `json:"fleet_push,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Seconds is a duration written as seconds.
type Seconds float64

// Duration is s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

// SourceState is what the daemon's syncs found of one source.
type SourceState struct {
	Revision string `json:"revision,omitempty"`
	// LastAttempt is when a sync last fetched it; LastSuccess when one
	// last brought it in without an error.
	LastAttempt *time.Time `json:"last_attempt,omitempty"`
	LastSuccess *time.Time `json:"last_success,omitempty"`
	// Moved is set when the last sync found a revision the one before did
	// not have: upstream moved.
	Moved bool `json:"moved"`
	// LastError is why the last sync of it failed; "" when it did not.
	LastError string `json:"last_error,omitempty"`
	// Partial is why the last sync brought it in part; "" when it
	// brought it whole (or failed: LastError).
	Partial      string         `json:"partial,omitempty"`
	FetchSeconds Seconds        `json:"fetch_seconds"`
	Skills       map[string]int `json:"skills,omitempty"`
}

// JobState is the outcome of a job's last run.
type JobState struct {
	At    time.Time `json:"at"`
	Error string    `json:"error,omitempty"`
}

// NotReady says what keeps the daemon from being ready.
type NotReady struct {
	// Source is the source at fault; "" for the cache.
	Source string `json:"source,omitempty"`
	Reason string `json:"reason"`
}

// ReloadFailed begins what /readyz and skillsync status say of a config
// that no longer loads; the reload's error follows.
const ReloadFailed = "the config no longer loads, so the daemon runs the one it read before until it does (fix it; the next sync, or a SIGHUP, loads it): "

// staleAfter is how many sync intervals a source may go without a
// successful sync before it is not ready.
const staleAfter = 3

// NotReady lists, sorted by source, what keeps the workspace from being
// ready at now: a source whose last sync failed, that never synced, or
// whose last success is older than three sync intervals (with no source,
// the same of the workspace's syncs), a cache marked dirty, and a last
// sync that failed as a whole, and a config that no longer loads (the
// daemon runs the one it read before). Empty: ready.
func (s *State) NotReady(now time.Time) []NotReady {
	var out []NotReady
	for _, name := range slices.Sorted(maps.Keys(s.Sources)) {
		src := s.Sources[name]
		switch {
		case src.LastError != "":
			out = append(out, NotReady{Source: name, Reason: "last sync failed: " + src.LastError})
		case src.Partial != "":
			out = append(out, NotReady{Source: name, Reason: "last sync brought it in part: " + src.Partial})
		case src.LastSuccess == nil:
			out = append(out, NotReady{Source: name, Reason: "not synced yet"})
		case s.stale(*src.LastSuccess, now):
			out = append(out, NotReady{Source: name, Reason: fmt.Sprintf("last synced %s ago, %d scheduled syncs since",
				now.Sub(*src.LastSuccess).Round(time.Second), staleAfter)})
		}
	}
	if len(s.Sources) == 0 {
		// Only local layers go to the targets: no source says whether a
		// sync placed them, so the sync itself does.
		switch {
		case s.LastSync == nil:
			out = append(out, NotReady{Reason: "not synced yet"})
		case s.stale(*s.LastSync, now):
			out = append(out, NotReady{Reason: fmt.Sprintf("last synced %s ago, %d scheduled syncs since",
				now.Sub(*s.LastSync).Round(time.Second), staleAfter)})
		}
	}
	if s.CacheDirty {
		out = append(out, NotReady{Reason: "the cache is marked dirty: a sync stopped halfway"})
	}
	if s.LastSyncError != "" {
		out = append(out, NotReady{Reason: "the last sync failed: " + s.LastSyncError})
	}
	if s.ReloadError != "" {
		out = append(out, NotReady{Reason: ReloadFailed + s.ReloadError})
	}
	return out
}

// stale reports whether staleAfter runs of the sync schedule came
// between a last success at last and now: counted on the schedule itself,
// so a night or a weekend without runs makes no source stale, and a
// schedule of a run a minute does not wait days. A state an older daemon
// wrote has the interval alone.
func (s *State) stale(last, now time.Time) bool {
	if sched, err := parser().Parse(s.SyncSchedule); s.SyncSchedule != "" && err == nil {
		due := last
		for range staleAfter {
			if due = sched.Next(due); due.IsZero() {
				return false
			}
		}
		return now.After(due)
	}
	return s.SyncEvery > 0 && now.Sub(last) > staleAfter*s.SyncEvery.Duration()
}

// clone copies s deeply enough to change it into the next snapshot.
func (s *State) clone() *State {
	c := *s
	c.Sources = make(map[string]SourceState, len(s.Sources))
	for k, v := range s.Sources {
		v.Skills = maps.Clone(v.Skills)
		c.Sources[k] = v
	}
	return &c
}

// maxStateSize bounds what ReadState reads.
const maxStateSize = 1 << 20

// ReadState reads the state file a daemon writes, and whether a daemon
// holds the lock file beside it now (held). A missing state file is a nil
// State and no error. It takes no lock and writes nothing.
func ReadState(ctx context.Context, stateFile, lockFile string) (st *State, held bool, err error) {
	data, err := atomicfile.ReadBounded(stateFile, maxStateSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read daemon state %s: %w", stateFile, err)
	}
	st = &State{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, false, fmt.Errorf("read daemon state %s: %w", stateFile, err)
	}
	if _, err := os.Lstat(lockFile); err == nil {
		l, err := flock.AcquireShared(ctx, lockFile, 0)
		if err == nil {
			_ = l.Close()
		} else if errors.Is(err, flock.ErrLocked) {
			held = true
		}
	}
	return st, held, nil
}

// writeState writes st to path atomically.
func writeState(path string, st *State) error {
	return atomicfile.WriteJSON(path, st, 0o644)
}

// Source returns what s knows of the named source; false when s is nil
// or knows nothing of it.
func (s *State) Source(name string) (SourceState, bool) {
	if s == nil {
		return SourceState{}, false
	}
	src, ok := s.Sources[name]
	return src, ok
}
