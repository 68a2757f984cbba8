package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/curator"
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

// daemon holds the engine the jobs use; SIGHUP replaces it.
type daemon struct {
	mu  sync.Mutex
	eng *skillsync.Engine
	log *slog.Logger
}

func (d *daemon) engine() *skillsync.Engine {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.eng
}

func (d *daemon) jobs() []curator.Job {
	cfg := d.engine().Config().Schedule
	return []curator.Job{
		{Name: "sync", Spec: cfg.Sync, Run: d.sync},
		{Name: "curate", Spec: cfg.Curate, Run: d.curate},
	}
}

func (d *daemon) sync(ctx context.Context) error {
	report, err := d.engine().Sync(ctx, skillsync.SyncOptions{})
	if report == nil {
		return err
	}
	for _, w := range report.Warnings {
		d.log.Warn(w)
	}
	d.log.Info("synced", "added", len(report.Skills.Added), "updated", len(report.Skills.Updated),
		"removed", len(report.Skills.Removed), "files_written", report.Files.Written, "failed_sources", report.Failed())
	return nil
}

func (d *daemon) curate(ctx context.Context) error {
	plan, err := d.engine().Curate(ctx, skillsync.CurateOptions{})
	if err != nil {
		return err
	}
	d.log.Info("curated", "checked", plan.Checked, "changes", len(plan.Changes), "skipped", plan.Skipped)
	return nil
}

func (a *app) newLogger() *slog.Logger {
	if isTerminal(a.stderr) {
		return slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(a.stderr, nil))
}

func (a *app) runDaemon(ctx context.Context) error {
	log := a.newLogger()
	eng, err := a.engine(skillsync.WithActor("daemon"))
	if err != nil {
		return err
	}
	d := &daemon{eng: eng, log: log}
	sched, err := curator.NewScheduler(ctx, log, d.jobs()...)
	if err != nil {
		return usageError("%w", err)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	log.Info("daemon started", "config", eng.Config().File, "sync", eng.Config().Schedule.Sync, "curate", eng.Config().Schedule.Curate)
	curator.RunLogged(ctx, log, curator.Job{Name: "sync", Run: d.sync})
	sched.Start()
	for {
		select {
		case <-ctx.Done():
			log.Info("stopping: waiting for running jobs")
			sched.Stop()
			log.Info("daemon stopped")
			return nil
		case <-hup:
			next, err := a.engine(skillsync.WithActor("daemon"))
			if err != nil {
				log.Error("reload failed; keeping the old config", "error", err.Error())
				continue
			}
			old := d.engine()
			d.mu.Lock()
			d.eng = next
			d.mu.Unlock()
			ns, err := curator.NewScheduler(ctx, log, d.jobs()...)
			if err != nil {
				d.mu.Lock()
				d.eng = old
				d.mu.Unlock()
				log.Error("reload failed; keeping the old config", "error", err.Error())
				continue
			}
			sched.Stop()
			sched = ns
			sched.Start()
			log.Info("config reloaded", "config", next.Config().File)
		}
	}
}
