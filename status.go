package skillsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/materialize"
)

// WorkspaceStatus is a workspace's state on one screen, for a person.
type WorkspaceStatus struct {
	Workspace string         `json:"workspace"`
	Config    string         `json:"config"`
	Sources   []SourceStatus `json:"sources"`
	Targets   []TargetStatus `json:"targets"`
	Usage     UsageStatus    `json:"usage"`
	Curation  CurationStatus `json:"curation"`
	// Drafts is how many drafts wait for the promotion gate.
	Drafts int `json:"drafts"`
	// Daemon is the daemon that holds the workspace; nil when none does.
	Daemon *DaemonStatus `json:"daemon"`
	// FleetPush is the daemon's last fleet push, when it runs one.
	FleetPush *daemon.JobState `json:"fleet_push,omitempty"`
	// Attention says what needs a person: a failing source, conflicts
	// waiting, a target that differs from its record.
	Attention []string `json:"attention"`
}

// SourceStatus is one source: what the cache holds and, from the
// daemon's last sync of it or a check (StatusOptions.Check), how it fares.
type SourceStatus struct {
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

// TargetStatus is one target folder.
type TargetStatus struct {
	Dir    string `json:"dir"`
	InSync bool   `json:"in_sync"`
	// Differences count files that differ from the target's record.
	Differences int `json:"differences"`
	// Conflicts are the user's edited copies moved aside into
	// .skillsync-conflicts/, waiting for a person.
	Conflicts []string `json:"conflicts"`
}

// UsageStatus counts the skills used lately.
type UsageStatus struct {
	Used7d  int `json:"used_7d"`
	Used30d int `json:"used_30d"`
}

// CurationStatus is where curation stands.
type CurationStatus struct {
	Stale    int        `json:"stale"`
	Archived int        `json:"archived"`
	LastRun  *time.Time `json:"last_run,omitempty"`
	NextRun  *time.Time `json:"next_run,omitempty"`
}

// DaemonStatus is the daemon that holds the workspace.
type DaemonStatus struct {
	PID    int       `json:"pid"`
	Since  time.Time `json:"since"`
	Listen string    `json:"listen,omitempty"`
}

// StatusOptions configure Status.
type StatusOptions struct {
	// Check asks each source's upstream whether it moved (a ref listing
	// for git), as skillsync outdated does, instead of trusting the
	// daemon's last sync.
	Check bool
}

// Status assembles the workspace's state; it changes nothing.
func (e *Engine) Status(ctx context.Context, opts StatusOptions) (*WorkspaceStatus, error) {
	now := e.now()
	st := &WorkspaceStatus{Workspace: e.layout.Root, Config: e.cfg.File, Sources: []SourceStatus{}, Targets: []TargetStatus{}, Attention: []string{}}
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return nil, err
	}
	ds, held, err := daemon.ReadState(ctx, e.layout.DaemonFile(), e.layout.DaemonLockFile())
	if err != nil {
		return nil, err
	}
	if ds != nil && held {
		st.Daemon = &DaemonStatus{PID: ds.PID, Since: ds.StartedAt, Listen: ds.Listen}
		st.FleetPush = ds.FleetPush
	}
	for _, s := range e.cfg.Sources {
		ss := SourceStatus{Name: s.Name, Kind: string(s.Kind)}
		if rec, ok := m.Sources[s.Name]; ok {
			ss.Revision = rec.Revision
		}
		if d, ok := ds.Source(s.Name); ok {
			ss.SyncedAt, ss.CheckedAt, ss.Error = d.LastSuccess, d.LastAttempt, d.LastError
			if d.LastAttempt != nil {
				ss.Moved = &d.Moved
			}
		}
		st.Sources = append(st.Sources, ss)
	}
	if opts.Check {
		out, err := e.Outdated(ctx)
		if err != nil {
			return nil, err
		}
		for i, o := range out {
			moved := o.Behind
			st.Sources[i].Moved, st.Sources[i].CheckedAt, st.Sources[i].Error = &moved, &now, o.Error
		}
	}
	for _, s := range st.Sources {
		if s.Error != "" {
			st.Attention = append(st.Attention, fmt.Sprintf("source %s fails: %s", s.Name, s.Error))
		}
	}
	for _, t := range e.cfg.Targets {
		ts := TargetStatus{Dir: t.Dir, Conflicts: []string{}}
		if entries, err := os.ReadDir(filepath.Join(t.Dir, materialize.ConflictsName)); err == nil {
			for _, en := range entries {
				ts.Conflicts = append(ts.Conflicts, filepath.Join(t.Dir, materialize.ConflictsName, en.Name()))
			}
		}
		diffs, err := materialize.VerifyTarget(t.Dir)
		if err != nil {
			st.Attention = append(st.Attention, fmt.Sprintf("target %s: %v", t.Dir, err))
		}
		ts.Differences, ts.InSync = len(diffs), err == nil && len(diffs) == 0
		if len(ts.Conflicts) > 0 {
			st.Attention = append(st.Attention, fmt.Sprintf("target %s: %d edited copies wait in %s", t.Dir, len(ts.Conflicts), materialize.ConflictsName))
		}
		if len(diffs) > 0 {
			st.Attention = append(st.Attention, fmt.Sprintf("target %s: %d files differ from its record (skillsync verify)", t.Dir, len(diffs)))
		}
		st.Targets = append(st.Targets, ts)
	}
	if u, err := e.Usage().Load(); err == nil {
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
	st.Curation.NextRun = daemon.NextRun(e.cfg.Schedule.Curate, now)
	if drafts, err := e.Drafts(ctx); err == nil {
		st.Drafts = len(drafts)
	}
	return st, nil
}
