package main

import (
	"context"
	"errors"
	"log/slog"
	"syscall"

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

SIGINT or SIGTERM stops scheduling, cancels fetches in flight, lets a
materialization reach a consistent point, and exits 0. SIGHUP reloads the
config; a config that does not load keeps the old one and logs why.

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

// runDaemon wires signals and the config into package daemon. SIGINT and
// SIGTERM cancel ctx (Main set that up before any work); SIGHUP is caught
// here before the first sync, so it reloads instead of killing.
func (a *app) runDaemon(ctx context.Context) error {
	reload := daemon.SignalReload(ctx, syscall.SIGHUP)
	log := a.newLogger()
	err := daemon.Run(ctx, daemon.Options{
		Load:    func(context.Context) (daemon.Setup, error) { return a.daemonSetup(log) },
		Reload:  reload,
		AtStart: []string{"sync"},
		Logger:  log,
	})
	var se *daemon.ScheduleError
	if errors.As(err, &se) {
		return &usageErr{err: err}
	}
	return err
}

// daemonSetup loads the config into an engine and returns the jobs over
// it; a reload makes a new engine, while runs in progress finish on the
// old one.
func (a *app) daemonSetup(log *slog.Logger) (daemon.Setup, error) {
	eng, err := a.engine(skillsync.WithActor("daemon"))
	if err != nil {
		return daemon.Setup{}, err
	}
	cfg := eng.Config()
	sync := func(ctx context.Context) error {
		report, err := eng.Sync(ctx, skillsync.SyncOptions{})
		if report == nil {
			return err
		}
		for _, w := range report.Warnings {
			log.Warn(w)
		}
		log.Info("synced", "added", len(report.Skills.Added), "updated", len(report.Skills.Updated),
			"removed", len(report.Skills.Removed), "files_written", report.Files.Written, "failed_sources", report.Failed())
		return err
	}
	curate := func(ctx context.Context) error {
		plan, err := eng.Curate(ctx, skillsync.CurateOptions{})
		if err != nil {
			return err
		}
		log.Info("curated", "checked", plan.Checked, "changes", len(plan.Changes), "skipped", plan.Skipped, "archive_held", plan.ArchiveHeld)
		return nil
	}
	return daemon.Setup{
		Jobs: []daemon.Job{
			daemon.NewJob("sync", cfg.Schedule.Sync, sync),
			daemon.NewJob("curate", cfg.Schedule.Curate, curate),
		},
		Attrs: []any{"config", cfg.File, "sync", cfg.Schedule.Sync, "curate", cfg.Schedule.Curate},
	}, nil
}
