package skillsync

import (
	"context"
	"fmt"

	"github.com/skillsync/skillsync/daemon"
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
		StateFile: d.e.layout.DaemonFile(), LockFile: d.e.layout.DaemonLockFile(), Attrs: []any{"config", cfg.File}, ConfigFile: cfg.File, ConfigRead: cfg.FileInfo}
}

// target names a target's folder for the metrics (daemon.TargetName).
func (d daemonEngine) target(dir string) string { return daemon.TargetName(d.e.layout.Root, dir) }

func (d daemonEngine) Sync(ctx context.Context, req daemon.SyncRequest) (*daemon.SyncResult, error) {
	opts := SyncOptions{StatCheck: req.StatCheck}
	if len(req.Only) > 0 {
		opts.Locked, opts.Move = true, req.Only
	}
	rep, err := d.e.Sync(ctx, opts)
	if rep == nil {
		return nil, err
	}
	usage, _ := d.e.Usage().Load() // unreadable: every skill counts as active
	res := rep.DaemonResult(d.e.layout.CacheDir(), usage, d.target, err)
	if w, ferr := d.e.Fleet(); ferr == nil {
		// The fleet hears of every sync; a store that cannot be reached
		// leaves usage local until the next push, and fails nothing here.
		if _, perr := w.Push(ctx); perr != nil {
			res.Warnings = append(res.Warnings, "fleet push after the sync: "+perr.Error())
		}
	}
	return res, err
}

// MoreJobs is the fleet push on schedule.fleet_push, when the config has
// a fleet.
func (d daemonEngine) MoreJobs() ([]daemon.Job, error) {
	w, err := d.e.Fleet()
	if err != nil {
		return nil, nil
	}
	return []daemon.Job{daemon.NewJob(daemon.JobFleetPush, d.e.cfg.Fleet.Push, func(ctx context.Context) error {
		_, err := w.Push(ctx)
		return err
	})}, nil
}

func (d daemonEngine) Curate(ctx context.Context) (*daemon.CurateResult, error) {
	plan, err := d.e.Curate(ctx, CurateOptions{})
	if err != nil {
		return nil, err
	}
	return daemon.CurateResultOf(plan), nil
}

func (d daemonEngine) Import(ctx context.Context) ([]daemon.ImportResult, error) {
	reports, err := d.e.ImportAll(ctx)
	return daemon.ImportResultsOf(reports), err
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

// cachedRevision is the revision of source the cache holds, "" when it
// holds none or cannot be read.
func (e *Engine) cachedRevision(source string) string {
	rev, _, _, _ := e.cached(source)
	return rev
}
