package skillsync

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// Daemon returns e as the daemon package's Engine: what daemon.Serve and
// daemon.Jobs run their jobs on.
func (e *Engine) Daemon() daemon.Engine { return daemonEngine{e, e.daemonSources()} }

// daemonEngine converts between the Engine and the daemon's narrow view.
type daemonEngine struct {
	e *Engine
	daemon.Sources
}

var _ daemon.Jobber = daemonEngine{}

func (d daemonEngine) Settings() daemon.Settings {
	cfg := d.e.cfg
	targets := make([]string, 0, len(cfg.Targets))
	for _, t := range cfg.Targets {
		targets = append(targets, d.target(t.Dir))
	}
	return daemon.Settings{Sync: cfg.Schedule.Sync, Curate: cfg.Schedule.Curate, Import: cfg.Schedule.Import,
		StatCheckEvery: cfg.Schedule.StatCheckEvery, Listen: cfg.Daemon.Listen, Sources: sourceNames(cfg.Sources), Targets: targets,
		StateFile: d.e.layout.DaemonFile(), LockFile: d.e.layout.DaemonLockFile(), Attrs: []any{"config", cfg.File}}
}

// target names a target's folder for the metrics: relative to the
// workspace when inside it.
func (d daemonEngine) target(dir string) string {
	if rel, err := filepath.Rel(d.e.layout.Root, dir); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return dir
}

func (d daemonEngine) Sync(ctx context.Context, req daemon.SyncRequest) (*daemon.SyncResult, error) {
	opts := SyncOptions{StatCheck: req.StatCheck}
	if len(req.Only) > 0 {
		opts.Locked, opts.Move = true, req.Only
	}
	rep, err := d.e.Sync(ctx, opts)
	if rep == nil {
		return nil, err
	}
	res := &daemon.SyncResult{Added: len(rep.Skills.Added), Updated: len(rep.Skills.Updated), Removed: len(rep.Skills.Removed),
		FilesWritten: rep.Files.Written, BytesWritten: rep.Files.BytesWritten, Warnings: rep.Warnings, Conflicts: map[string]int{},
		CacheDirty: materialize.Dirty(d.e.layout.CacheDir())}
	if d.e.cfg.Fleet != nil {
		// The fleet hears of every sync; a store that cannot be reached
		// leaves usage local until the next push, and fails nothing here.
		if _, perr := d.e.fleetPush(ctx); perr != nil {
			res.Warnings = append(res.Warnings, "fleet push after the sync: "+perr.Error())
		}
	}
	for _, t := range rep.Targets {
		res.Conflicts[d.target(t.Dir)] += len(t.Conflicts) + len(t.Preserved)
	}
	usage, _ := d.e.Usage().Load() // unreadable: every skill counts as active
	m := d.e.manifest()
	for _, s := range rep.Sources {
		var cached []string
		if rec := m.Sources[s.Source]; rec != nil {
			cached = slices.Collect(maps.Keys(rec.Skills))
		}
		res.Sources = append(res.Sources, daemon.SourceResult{Name: s.Source, Revision: s.Revision, Err: s.Error,
			FetchDuration: s.FetchTime, FetchBytes: s.Brought, Skills: curator.CountStates(usage, s.Source, cached)})
	}
	return res, err
}

// MoreJobs is the fleet push on schedule.fleet_push, when the config has
// a fleet.
func (d daemonEngine) MoreJobs() ([]daemon.Job, error) {
	f := d.e.cfg.Fleet
	if f == nil {
		return nil, nil
	}
	return []daemon.Job{daemon.NewJob(daemon.JobFleetPush, f.Push, func(ctx context.Context) error {
		_, err := d.e.fleetPush(ctx)
		return err
	})}, nil
}

func (d daemonEngine) Curate(ctx context.Context) (*daemon.CurateResult, error) {
	plan, err := d.e.Curate(ctx, CurateOptions{})
	if err != nil {
		return nil, err
	}
	res := &daemon.CurateResult{Checked: plan.Checked, Skipped: plan.Skipped, ArchiveHeld: plan.ArchiveHeld, Changes: map[string]int{}}
	for _, c := range plan.Changes {
		res.Changes[string(c.To)]++
	}
	return res, nil
}

func (d daemonEngine) Import(ctx context.Context) ([]daemon.ImportResult, error) {
	reports, err := d.e.ImportAll(ctx)
	out := make([]daemon.ImportResult, 0, len(reports))
	for _, r := range reports {
		out = append(out, daemon.ImportResult{Agent: r.Agent, Files: r.Files, Uses: r.Uses, Views: r.Views, Unknown: r.Unknown,
			Malformed: r.Malformed, TooLong: r.TooLong, Reactivated: len(r.Reactivated), Unreadable: r.Unreadable})
	}
	return out, err
}

// PushSources names the sources that announce their changes as they
// happen (daemon.Sources.PushSources); Listen listens to them, and a
// daemon syncs each on its own when it changes.
func (e *Engine) PushSources() []string { return e.daemonSources().PushSources() }

// daemonSources opens the config's sources for the daemon's listening.
func (e *Engine) daemonSources() daemon.Sources {
	return daemon.Sources{Names: sourceNames(e.cfg.Sources), Open: func(name string, logf func(string, ...any)) (repository.Repository, error) {
		s, ok := e.source(name)
		if !ok {
			return nil, fmt.Errorf("no source named %s", name)
		}
		sp := e.spec(s, "")
		sp.Host.Logf = logf
		return e.kinds.Open(sp)
	}}
}

// CachedRevision is the revision of source the cache holds, "" when it
// holds none or cannot be read: then every change is reported.
func (d daemonEngine) CachedRevision(source string) string { return d.e.cachedRevision(source) }

// manifest is the cache's manifest; an empty one when it cannot be read.
func (e *Engine) manifest() *materialize.Manifest {
	m, err := materialize.ReadManifest(e.layout.CacheDir())
	if err != nil {
		return materialize.NewManifest()
	}
	return m
}

// cachedRevision is the revision of source the cache holds, "" when none.
func (e *Engine) cachedRevision(source string) string {
	if rec, ok := e.manifest().Sources[source]; ok {
		return rec.Revision
	}
	return ""
}

// fetchTime is how long a source's fetch took, from its report.
func fetchTime(rep FetchReport) time.Duration {
	return time.Duration(rep.DurationMS) * time.Millisecond
}
