package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/daemon"
)

func (a *app) daemonCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "daemon",
		Short: "Run sync and curation on their schedules",
		Long: `Run sync on schedule.sync (default "@every 15m") and curation on
schedule.curate (default "0 3 * * *"), cron expressions with CRON_TZ=
accepted. The first sync runs at start. A job never overlaps its own previous
run; a panic in a job is logged and the daemon goes on.

Each postgres source is also watched for changes: when one commits (a
skillsync publish, any writer of its tables), that source alone is synced
within a second, git sources staying at their locked commits. When
the connection drops, the schedule syncs it until the connection is back.

SIGINT or SIGTERM stops scheduling, cancels fetches in flight, lets a
materialization reach a consistent point, and exits 0. SIGHUP reloads the
config, and watches the postgres sources of the new one; a config that does
not load keeps the old one and logs why.

Logs go to stderr through log/slog, as JSON when stderr is not a terminal,
one line per job run with its duration and outcome.`,
		Example: `  skillsync daemon
  SKILLSYNC_CONFIG=/etc/skillsync.yaml skillsync daemon`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runDaemon(c.Context())
		},
	}
}

func (a *app) newLogger() *slog.Logger {
	if isTerminal(a.stderr) {
		return slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(a.stderr, nil))
}

// runDaemon wires signals, the config and the postgres sources'
// notifications into package daemon. SIGINT and SIGTERM cancel ctx (Main
// set that up before any work); SIGHUP is caught here before the first
// sync, so it reloads instead of killing.
func (a *app) runDaemon(ctx context.Context) error {
	reload := daemon.SignalReload(ctx, syscall.SIGHUP)
	log := a.newLogger()
	var d *daemon.Daemon
	push := &pushWatch{log: log}
	defer push.stop()
	d = daemon.New(daemon.Options{
		Load: func(ctx context.Context) (daemon.Setup, error) {
			setup, eng, err := a.daemonSetup(log)
			if err != nil {
				return setup, err
			}
			push.restart(ctx, eng, d)
			return setup, nil
		},
		Reload:  reload,
		AtStart: []string{"sync"},
		Logger:  log,
	})
	return d.Run(ctx)
}

// pushJob names the job that syncs one postgres source when it changes.
func pushJob(source string) string { return "sync:" + source }

// daemonSetup loads the config into an engine and returns the jobs over
// it: sync and curate on their schedules, and for each postgres source a
// job without one that syncs that source alone, run when it changes. A
// reload makes a new engine, while runs in progress finish on the old one.
// The schedules are checked here, so that a config whose schedule does not
// parse is refused before anything is swapped.
func (a *app) daemonSetup(log *slog.Logger) (daemon.Setup, *skillsync.Engine, error) {
	eng, err := a.engine(skillsync.WithActor("daemon"), skillsync.WithVersion(buildVersion()))
	if err != nil {
		return daemon.Setup{}, nil, err
	}
	cfg := eng.Config()
	for _, s := range [][2]string{{"sync", cfg.Schedule.Sync}, {"curate", cfg.Schedule.Curate}} {
		if s[1] == "" {
			continue // run only when triggered
		}
		if err := daemon.ParseSchedule(s[0], s[1]); err != nil {
			return daemon.Setup{}, nil, err
		}
	}
	sync := func(opts skillsync.SyncOptions) func(context.Context) error {
		return func(ctx context.Context) error {
			report, err := eng.Sync(ctx, opts)
			if report == nil {
				return err
			}
			for _, w := range report.Warnings {
				log.Warn(w)
			}
			log.Info("synced", "added", len(report.Skills.Added), "updated", len(report.Skills.Updated),
				"removed", len(report.Skills.Removed), "files_written", report.Files.Written, "failed_sources", report.Failed())
			fleetPush(ctx, eng, log)
			return err
		}
	}
	curate := func(ctx context.Context) error {
		plan, err := eng.Curate(ctx, skillsync.CurateOptions{})
		if err != nil {
			return err
		}
		log.Info("curated", "checked", plan.Checked, "changes", len(plan.Changes), "skipped", plan.Skipped, "archive_held", plan.ArchiveHeld)
		return nil
	}
	jobs := []daemon.Job{
		daemon.NewJob("sync", cfg.Schedule.Sync, statChecked(cfg.Schedule.StatCheckEvery, sync)),
		daemon.NewJob("curate", cfg.Schedule.Curate, curate),
		importJob(eng, cfg.Schedule.Import, log),
	}
	if cfg.Fleet != nil {
		jobs = append(jobs, daemon.NewJob("fleet_push", cfg.Fleet.Push, func(ctx context.Context) error { fleetPush(ctx, eng, log); return nil }))
	}
	for _, name := range eng.PushSources() {
		// The git sources stay at their locked commits, which costs no
		// network.
		jobs = append(jobs, daemon.NewJob(pushJob(name), "", sync(skillsync.SyncOptions{Locked: true, Move: []string{name}})))
	}
	return daemon.Setup{
		Jobs:  jobs,
		Attrs: []any{"config", cfg.File, "sync", cfg.Schedule.Sync, "curate", cfg.Schedule.Curate, "import", cfg.Schedule.Import},
	}, eng, nil
}

// pushWatch runs Engine.Listen over the current config's engine and
// triggers a source's push job when it changes; each reload replaces it.
type pushWatch struct {
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
}

// restart stops the listeners of the previous config, if any, and starts
// those of eng's, until ctx ends.
func (w *pushWatch) restart(ctx context.Context, eng *skillsync.Engine, d *daemon.Daemon) {
	w.stop()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	w.cancel, w.done = cancel, done
	go func() {
		defer close(done)
		_ = eng.Listen(ctx, skillsync.ListenOptions{Logger: w.log}, func(source string) {
			triggerPush(ctx, d, pushJob(source), w.log)
		})
	}()
}

// stop ends the listeners and waits for their connections to close.
func (w *pushWatch) stop() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.cancel, w.done = nil, nil
}

// triggerPush runs job now. Load starts the listeners just before the
// daemon installs the jobs it returned, so a change reported in between
// finds no job yet: it is tried again for a moment before it is logged.
func triggerPush(ctx context.Context, d *daemon.Daemon, job string, log *slog.Logger) {
	for attempt := 0; ; attempt++ {
		err := d.Trigger(job)
		if err == nil {
			return
		}
		if attempt == 20 {
			log.Error("cannot sync a changed source; the schedule will", "job", job, "error", err.Error())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// statChecked runs sync with a stat check of every cached and target file
// on its first run and every every-th run after (never when every is 0):
// a sync with nothing new trusts its records, and this is how a daemon
// still notices files changed behind its back.
func statChecked(every int, sync func(skillsync.SyncOptions) func(context.Context) error) func(context.Context) error {
	plain, checked := sync(skillsync.SyncOptions{}), sync(skillsync.SyncOptions{StatCheck: true})
	var runs atomic.Int64
	return func(ctx context.Context) error {
		n := runs.Add(1) - 1
		if every > 0 && n%int64(every) == 0 {
			return checked(ctx)
		}
		return plain(ctx)
	}
}
