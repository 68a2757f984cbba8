// Package status assembles a workspace's state on one screen, for a
// person: what the cache holds of each source, how the daemon fares,
// the targets' differences and conflicts, usage and curation, the drafts
// waiting. It reads and changes nothing but what its Input names.
package status

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/syncrun"
	"github.com/skillsync/skillsync/workspace"
)

// Workspace is a workspace's state on one screen.
type Workspace struct {
	Workspace string   `json:"workspace"`
	Config    string   `json:"config"`
	Sources   []Source `json:"sources"`
	Targets   []Target `json:"targets"`
	Usage     Usage    `json:"usage"`
	Curation  Curation `json:"curation"`
	// Drafts is how many drafts wait for the promotion gate.
	Drafts int `json:"drafts"`
	// Daemon is the daemon that holds the workspace; nil when none does.
	Daemon *Daemon `json:"daemon"`
	// FleetPush is the daemon's last fleet push, when it runs one.
	FleetPush *daemon.JobState `json:"fleet_push,omitempty"`
	// Attention says what needs a person: a failing source, conflicts
	// waiting, a target that differs from its record.
	Attention []string `json:"attention"`
}

// Source is one source: what the cache holds and, from its last sync
// (the daemon's or one by hand, whichever is later: the cache's
// materialize.SyncsName) or a check (Input.Check), how it fares.
type Source struct {
	Name     string     `json:"name"`
	Kind     string     `json:"kind"`
	Revision string     `json:"revision"`
	SyncedAt *time.Time `json:"synced_at,omitempty"`
	// Moved is set when upstream moved at the last check; nil when no
	// check is known.
	Moved     *bool      `json:"upstream_moved,omitempty"`
	CheckedAt *time.Time `json:"checked_at,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// Target is one target folder.
type Target struct {
	Dir    string `json:"dir"`
	InSync bool   `json:"in_sync"`
	// Differences count files that differ from the target's record.
	Differences int `json:"differences"`
	// Conflicts are the user's edited copies moved aside into
	// .skillsync-conflicts/, waiting for a person.
	Conflicts []string `json:"conflicts"`
	// Blocked are the skills the last sync left out of the target: a
	// folder skillsync did not make stands where each would go.
	Blocked []string `json:"blocked,omitempty"`
	// Refused says why every sync leaves the target as it is (a symbolic
	// link on its path, another workspace keeping it); "" when none does.
	Refused string `json:"refused,omitempty"`
	// Unsynced is set when no sync has written the target yet (it has no
	// record), or its record was removed since.
	Unsynced bool `json:"unsynced,omitempty"`
}

// Usage counts the skills used lately.
type Usage struct {
	Used7d  int `json:"used_7d"`
	Used30d int `json:"used_30d"`
}

// Curation is where curation stands.
type Curation struct {
	Stale    int        `json:"stale"`
	Archived int        `json:"archived"`
	LastRun  *time.Time `json:"last_run,omitempty"`
	// NextRun is when the daemon that holds the workspace curates next;
	// nil without one: nothing else runs the schedule, though a cron job
	// may run skillsync curate.
	NextRun *time.Time `json:"next_run,omitempty"`
}

// Daemon is the daemon that holds the workspace.
type Daemon struct {
	PID    int       `json:"pid"`
	Since  time.Time `json:"since"`
	Listen string    `json:"listen,omitempty"`
}

// Input is what Build reads: the workspace's files and config, and what
// the caller computes.
type Input struct {
	// Root is the workspace, Config its config file.
	Root, Config string
	// CacheDir, DaemonFile and DaemonLockFile are the workspace's files.
	CacheDir, DaemonFile, DaemonLockFile string
	// Sources name the configured sources (Name and Kind), Targets the
	// target folders, CurateSchedule the curation schedule.
	Sources        []Source
	Targets        []string
	CurateSchedule string
	Now            time.Time
	// Check, when set, asks each source's upstream whether it moved,
	// instead of trusting the daemon's last sync: one answer per source,
	// in order, whatever the error says of them.
	Check func(context.Context) ([]Check, error)
	// Usage reads the usage file; one that cannot be read counts nothing.
	Usage func() (*curator.Usage, error)
	// Drafts counts the drafts; an error counts none.
	Drafts func(context.Context) (int, error)
	// Lock reads skillsync.lock: one that cannot be read stops every
	// sync, and needs a person. Nil checks nothing.
	Lock func() error
	// Refusals are the target folders and AGENTS.md files a sync would
	// leave as they are, each with why (targets.Places.Refusals). Nil
	// checks none.
	Refusals func() map[string]error
}

// Check is what a look upstream found of one source.
type Check struct {
	Behind bool
	Error  string
}

// Build assembles the workspace's state; it changes nothing.
func Build(ctx context.Context, in Input) (*Workspace, error) {
	now := in.Now
	st := &Workspace{Workspace: in.Root, Config: in.Config, Sources: []Source{}, Targets: []Target{}, Attention: []string{}}
	m, err := materialize.ReadManifest(in.CacheDir)
	if errors.Is(err, materialize.ErrCorrupt) {
		// The rest of the state is shown: the next sync sets the record
		// aside and rebuilds the cache from its files.
		st.Attention = append(st.Attention, err.Error()+"; skillsync sync sets it aside and builds the cache's records again")
		m, err = materialize.NewManifest(), nil
	}
	if err != nil {
		return nil, err
	}
	recs := ReadRecords(ctx, in.CacheDir, in.DaemonFile, in.DaemonLockFile)
	st.Attention = append(st.Attention, recs.Problems...)
	ds, held := recs.Daemon, recs.Held
	if ds != nil && held {
		st.Daemon = &Daemon{PID: ds.PID, Since: ds.StartedAt, Listen: ds.Listen}
		st.FleetPush = ds.FleetPush
		if ds.LastSyncError != "" {
			st.Attention = append(st.Attention, "the daemon's last sync failed: "+ds.LastSyncError)
		}
		st.Attention = append(st.Attention, daemonJobs(ds)...)
	}
	for _, s := range in.Sources {
		ss := recs.Source(s.Name)
		ss.Kind = s.Kind
		rec, cached := m.Sources[s.Name]
		if cached {
			ss.Revision = rec.Revision
			if rec.Revision == "" {
				// A sync records no revision for a source it brought in
				// part: skills it could not read or write kept old copies.
				st.Attention = append(st.Attention, fmt.Sprintf("source %s was partly synced: %s", s.Name, syncrun.PartlyWhy))
			}
		}
		if !cached && ss.Error == "" {
			// In the config, not in the cache: added by hand, or an add
			// stopped before its sync was done. One whose sync failed is
			// told below with its error: running sync again does not mend
			// it.
			st.Attention = append(st.Attention, fmt.Sprintf("source %s has not been synced yet: run skillsync sync", s.Name))
		}
		st.Sources = append(st.Sources, ss)
	}
	lockErr := error(nil)
	if in.Lock != nil {
		if lockErr = in.Lock(); lockErr != nil {
			st.Attention = append(st.Attention, lockErr.Error())
		}
	}
	// A check reads the lock too: with none to read it says the same.
	if in.Check != nil && lockErr == nil {
		out, err := in.Check(ctx)
		if err != nil && len(out) != len(st.Sources) {
			// No answer for each source (a lock that cannot be read): the
			// rest of the state is shown, and the check's failure with it.
			st.Attention = append(st.Attention, "the upstream check failed: "+err.Error())
			out = nil
		}
		for i, o := range out {
			st.Sources[i].CheckedAt, st.Sources[i].Error = &now, o.Error
			if o.Error == "" {
				// A source that could not be asked has not moved or stayed:
				// it is unknown.
				moved := o.Behind
				st.Sources[i].Moved = &moved
			}
		}
	}
	for _, s := range st.Sources {
		if s.Error != "" {
			st.Attention = append(st.Attention, fmt.Sprintf("source %s fails: %s", s.Name, s.Error))
		}
	}
	var refusals map[string]error
	if in.Refusals != nil {
		refusals = in.Refusals()
	}
	for _, dir := range in.Targets {
		st.Targets = append(st.Targets, st.target(dir, refusals[dir]))
	}
	// The AGENTS.md files refused, in a stable order.
	for _, path := range slices.Sorted(maps.Keys(refusals)) {
		if !slices.Contains(in.Targets, path) {
			st.Attention = append(st.Attention, refusals[path].Error())
		}
	}
	// The workspace layer through a link: the sync reads it, and every
	// write refuses it (use, the agents' hooks, import, curation).
	layout := workspace.New(in.Root, "")
	if err := agent.LayerLink(layout.SkillsDir()); err != nil {
		st.Attention = append(st.Attention, err.Error())
	}
	if u, err := in.Usage(); err == nil {
		st.usage(u, now)
		if !held {
			// A running daemon says how its imports fare; without one, a
			// cron job's import and curation fail unseen: what stops them
			// before they read anything is read here.
			for _, err := range agent.Stopped(layout.ImportedFile(), layout.HookedFile(), u.Imports) {
				st.Attention = append(st.Attention, "the usage import stops, and skillsync curate with it, which imports first: "+err.Error())
			}
		}
	} else {
		// The counts below would say no skill was used.
		st.Attention = append(st.Attention, "the usage record cannot be read: "+err.Error())
	}
	// Without a daemon nothing runs the schedule: a cron job may, unseen.
	if held {
		st.Curation.NextRun = daemon.NextRun(in.CurateSchedule, now)
		if ds.NextCurate != nil {
			// The daemon's own: its clock's time zone sets the schedule's.
			st.Curation.NextRun = ds.NextCurate
		}
	}
	if n, err := in.Drafts(ctx); err == nil {
		st.Drafts = n
	}
	return st, nil
}

// daemonJobs says what of a running daemon's jobs besides its syncs
// needs a person: a config it could not reload (it runs the one it read
// before), a usage import and a curation that failed (each fails again
// at every run until a person acts, and curation waits for the import).
func daemonJobs(ds *daemon.State) []string {
	var out []string
	if ds.ReloadError != "" {
		out = append(out, "the daemon: "+daemon.ReloadFailed+ds.ReloadError)
	}
	if ds.LastImportError != "" {
		out = append(out, "the daemon's last usage import failed: "+ds.LastImportError)
	}
	// A curation that failed for its import says nothing more.
	if ds.LastCurateError != "" && (ds.LastImportError == "" || !strings.Contains(ds.LastCurateError, ds.LastImportError)) {
		out = append(out, "the daemon's last curation failed: "+ds.LastCurateError)
	}
	return out
}

// Records are a workspace's records of its syncs: the state file of its
// daemon (Held: one holds the workspace now) and the cache's record of
// the syncs by hand (materialize.SyncsName). Status and skillsync serve's
// sources page weigh them alike (Source).
type Records struct {
	Daemon *daemon.State
	Held   bool
	Syncs  *syncrun.Syncs
	// Problems say which record could not be read, and the fix; the
	// other is read all the same.
	Problems []string
}

// ReadRecords reads a workspace's records of its syncs; it writes
// nothing. A record that cannot be read is left out, and Problems says so.
func ReadRecords(ctx context.Context, cacheDir, daemonFile, daemonLockFile string) Records {
	var r Records
	var err error
	r.Daemon, r.Held, err = daemon.ReadState(ctx, daemonFile, daemonLockFile)
	if err != nil {
		// A daemon writes the file anew.
		r.Problems = append(r.Problems, err.Error()+"; a running daemon writes it anew, or delete it")
		r.Daemon, r.Held = nil, false
	}
	r.Syncs, err = syncrun.ReadSyncs(filepath.Join(cacheDir, materialize.SyncsName))
	if err != nil {
		r.Problems = append(r.Problems, err.Error()+"; the next skillsync sync writes it anew")
		r.Syncs = nil
	}
	return r
}

// Source is what the records say of the named source: when it last
// synced, its last error, and whether upstream moved. A sync by hand and
// the daemon's each say what they found: the later try tells how the
// source fares, the later success when it last synced. What a daemon
// that has stopped last tried may be mended since: only its successes
// count.
func (r Records) Source(name string) Source {
	ss := Source{Name: name}
	if d, ok := r.Daemon.Source(name); ok {
		ss.SyncedAt = d.LastSuccess
		if r.Held {
			ss.CheckedAt, ss.Error = d.LastAttempt, d.LastError
			if d.LastAttempt != nil && d.LastError == "" {
				ss.Moved = &d.Moved
			}
		}
	}
	if h, ok := r.Syncs.Source(name); ok {
		if later(h.LastSuccess, ss.SyncedAt) {
			ss.SyncedAt = h.LastSuccess
		}
		if later(h.LastAttempt, ss.CheckedAt) {
			ss.CheckedAt, ss.Error, ss.Moved = h.LastAttempt, h.LastError, nil
		}
	}
	return ss
}

// later reports whether a is set and after b, or b is not set.
func later(a, b *time.Time) bool { return a != nil && (b == nil || a.After(*b)) }

// counted is n and what one or many of a thing do: "1 file differs",
// "2 files differ".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// target looks at one target folder: its conflicts and its differences
// from its record. refused is why a sync would leave it as it is, nil
// when it would not: then nothing is read through the link.
func (st *Workspace) target(dir string, refused error) Target {
	ts := Target{Dir: dir, Conflicts: []string{}}
	if refused != nil {
		ts.Refused = refused.Error()
		st.Attention = append(st.Attention, ts.Refused)
		return ts
	}
	if entries, err := os.ReadDir(filepath.Join(dir, materialize.ConflictsName)); err == nil {
		for _, en := range entries {
			ts.Conflicts = append(ts.Conflicts, filepath.Join(dir, materialize.ConflictsName, en.Name()))
		}
	}
	rec, err := materialize.LoadTargetRecord(dir)
	var diffs []materialize.Difference
	if err != nil {
		st.Attention = append(st.Attention, fmt.Sprintf("target %s: %v", dir, err))
	} else {
		diffs = rec.Verify(dir)
	}
	ts.Differences, ts.InSync = len(diffs), err == nil && len(diffs) == 0
	if _, serr := os.Lstat(filepath.Join(dir, materialize.RecordName)); errors.Is(serr, fs.ErrNotExist) {
		// Every sync writes a target's record, even with no skill to
		// place: without one, nothing there is skillsync's yet, which
		// "in sync" would deny.
		ts.InSync, ts.Unsynced = false, true
		st.Attention = append(st.Attention, fmt.Sprintf("target %s has not been written by a sync yet: skillsync sync writes it", dir))
	}
	if len(ts.Conflicts) > 0 {
		copies := counted(len(ts.Conflicts), "edited copy waits", "edited copies wait")
		st.Attention = append(st.Attention, fmt.Sprintf("target %s: %s in %s", dir, copies, materialize.ConflictsName))
	}
	if len(diffs) > 0 {
		files := counted(len(diffs), "file differs", "files differ")
		st.Attention = append(st.Attention, fmt.Sprintf("target %s: %s from its record: skillsync verify lists them, and verify --repair rewrites what differs, moving an edited copy aside into %s first",
			dir, files, materialize.ConflictsName))
	}
	if other := rec.KeptElsewhere(dir, st.Workspace); err == nil && other != "" {
		ts.InSync = false
		ts.Refused = fmt.Sprintf("the workspace %s keeps it", other)
		st.Attention = append(st.Attention, fmt.Sprintf("target %s is kept by the workspace %s (its %s says so): this workspace's skills are not placed there; skillsync sync says what to do",
			dir, other, materialize.RecordName))
	}
	if err == nil && len(rec.Blocked) > 0 {
		ts.Blocked = rec.Blocked
		st.Attention = append(st.Attention, fmt.Sprintf("target %s: %s left out, a folder skillsync did not make standing where each would go (%s); move it away, or rename the skill",
			dir, counted(len(rec.Blocked), "skill", "skills"), strings.Join(rec.Blocked, ", ")))
	}
	return ts
}

// usage counts the skills used within 7 and 30 days of now, and the
// copies stale and archived.
func (st *Workspace) usage(u *curator.Usage, now time.Time) {
	for _, s := range u.Skills {
		if s.LastUsedAt != nil && now.Sub(*s.LastUsedAt) <= 30*24*time.Hour {
			st.Usage.Used30d++
			if now.Sub(*s.LastUsedAt) <= 7*24*time.Hour {
				st.Usage.Used7d++
			}
		}
		switch s.State {
		case curator.Stale:
			st.Curation.Stale++
		case curator.Archived:
			st.Curation.Archived++
		}
	}
	st.Curation.LastRun = u.Curator.LastRunAt
}
