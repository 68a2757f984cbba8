package main

import (
	"context"
	"log/slog"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/daemon"
)

func (a *app) daemonCommand() *cobra.Command {
	var listen string
	c := &cobra.Command{
		Annotations: map[string]string{longRunning: "yes"},
		Use:         "daemon",
		Short:       "Run sync and curation on their schedules",
		Long: `Run sync on schedule.sync (default "@every 15m") and curation on
schedule.curate (default "0 3 * * *"), cron expressions with CRON_TZ=
accepted. The first sync runs at start. A job never overlaps its own previous
run; a panic in a job is logged and the daemon goes on.

Each postgres source is also watched for changes: when one commits (a
skillsync publish, any writer of its tables), that source alone is synced
within a second, git sources staying at their locked commits. When
the connection drops, the schedule syncs it until the connection is back.

SIGINT or SIGTERM stops scheduling, cancels fetches in flight, lets a
materialization reach a consistent point, and exits 0 (a second signal,
a second or more later, exits at once). SIGHUP reloads the
config, syncs on it at once and watches the postgres sources of the new one;
a config that does not load keeps the old one and logs why. A config edited
without a SIGHUP (skillsync add, remove) is reloaded before the next sync.

With --listen (or daemon: {listen: ...} in the config) it serves Prometheus
metrics on /metrics, /healthz (200 while it serves) and /readyz (200 when
every source synced whole within three sync intervals, the cache is clean and
the last sync did not fail as a whole, else 503 with JSON naming what is not); a port alone is on 127.0.0.1. An address
in use exits 2. See docs/operations.md.

Logs go to stderr through log/slog, one line per job run with its duration
and outcome: as JSON when stderr is not a terminal, or as --log-format says.`,
		Example: `  skillsync daemon
  skillsync daemon --listen 127.0.0.1:9464
  SKILLSYNC_CONFIG=/etc/skillsync.yaml skillsync daemon`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runDaemon(c.Context(), listen)
		},
	}
	c.Flags().StringVar(&listen, "listen", "", "serve /metrics, /healthz and /readyz on host:port (a port alone: on 127.0.0.1)")
	return c
}

// newLogger is the daemon's: --log-format's, else text on a terminal
// and JSON elsewhere.
func (a *app) newLogger() *slog.Logger {
	if a.logFormat == logText || (a.logFormat == "" && isTerminal(a.stderr)) {
		return slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(a.stderr, nil))
}

// runDaemon hands package daemon an engine over the config, loaded again
// at each reload. SIGINT and SIGTERM cancel ctx (Main set that up before
// any work); SIGHUP is caught here before the first sync, so it reloads
// instead of killing.
func (a *app) runDaemon(ctx context.Context, listen string) error {
	return daemon.Serve(ctx, daemon.Config{
		Open: func(context.Context) (daemon.Engine, error) {
			eng, err := a.writeEngine(skillsync.WithActor("daemon"))
			if err != nil {
				return nil, err
			}
			if file := eng.Config().File; a.configPath == "" && file != "" {
				// A reload reads the file the daemon started with: should it
				// be gone a moment (a checkout, a save by rename), the
				// built-in default found in its place is no reload of it.
				a.configPath = file
			}
			return eng.Daemon(), nil
		},
		Reload: daemon.SignalReload(ctx, syscall.SIGHUP),
		Logger: a.newLogger(),
		Listen: listen,
	})
}
