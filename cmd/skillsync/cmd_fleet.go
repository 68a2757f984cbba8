package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/fleet"
)

func newFleetCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Report to and read the team's fleet store (PostgreSQL)",
		Long: `With a fleet: section in the config, every host pushes its heartbeat and usage
to one PostgreSQL schema, and fleet status and fleet usage read the whole
team's picture from it. See docs/fleet.md.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(newFleetPushCommand(a, nil), newFleetStatusCommand(a, nil), newFleetUsageCommand(a, nil))
	return cmd
}

func newFleetPushCommand(a *app, runF func(context.Context, *struct{}) error) *cobra.Command {
	return &cobra.Command{
		Use:   "push",
		Short: "Send this workspace's heartbeat and changed usage to the fleet store",
		Long: `Send this host's heartbeat (skillsync version, environment, each source's
locked revision and last sync result, skill count, last error) and the usage
records changed since the last acknowledged push. Counters go whole, so a
push repeated after a lost answer counts nothing twice. The daemon pushes
after each sync and on schedule.fleet_push.`,
		Example: `  SKILLSYNC_FLEET_DSN=postgres://... skillsync fleet push`,
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runFleetPush)(c.Context(), &struct{}{})
		},
	}
}

func (a *app) runFleetPush(ctx context.Context, _ *struct{}) error {
	eng, err := a.engine(skillsync.WithVersion(buildVersion()))
	if err != nil {
		return err
	}
	w, err := eng.Fleet()
	if err != nil {
		return err
	}
	rep, err := w.Push(ctx)
	if err != nil {
		return err
	}
	if a.json {
		rep.Skipped = orEmpty(rep.Skipped)
		return writeJSON(a.stdout, rep)
	}
	fmt.Fprintf(a.stdout, "pushed host %s (push %d): %s, %d uses and %d views new\n", safe(rep.Host), rep.Seq, plural(rep.Sent, "usage record"), rep.Uses, rep.Views)
	if rep.ClockSkewMS != nil {
		if skew := time.Duration(*rep.ClockSkewMS) * time.Millisecond; skew.Abs() >= fleet.MinSkew {
			a.logWarn(fmt.Sprintf("this host's clock is %s the fleet store's: its uses were dated by the store's clock; set the clock right (NTP)", fleet.SkewText(skew)))
		}
	}
	return nil
}

type fleetStatusOptions struct {
	staleAfter time.Duration
	skill      string
}

// errFleetUnhealthy makes fleet status exit 1 after printing the hosts.
var errFleetUnhealthy = errors.New("a host is silent or failing")

func newFleetStatusCommand(a *app, runF func(context.Context, *fleetStatusOptions) error) *cobra.Command {
	opts := &fleetStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every host's last heartbeat and whether its sources are behind",
		Long: `Show every host of the fleet with its last heartbeat, environment, version,
how far its clock ran from the store's at its last push (CLOCK) and, per
source, its revision against the newest revision any host reports of that
source at the same remote (behind) and its last error. Exits 1 when a host is
silent past --stale-after or failing, so it can drive an alert; host ids that
look alike without being one host are a warning. --skill NAME lists the hosts
that place that skill, with their uses.`,
		Example: `  skillsync fleet status --stale-after 2h
  skillsync fleet status --skill pdf --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runFleetStatus)(c.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.staleAfter, "stale-after", 2*time.Hour, "a host whose last heartbeat is older is silent")
	cmd.Flags().StringVar(&opts.skill, "skill", "", "list the hosts that place this skill")
	return cmd
}

func (a *app) runFleetStatus(ctx context.Context, opts *fleetStatusOptions) error {
	if opts.staleAfter <= 0 {
		return usageError("--stale-after must be positive")
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	w, err := eng.Fleet()
	if err != nil {
		return err
	}
	hosts, err := w.Status(ctx, fleet.StatusOptions{StaleAfter: opts.staleAfter, Skill: opts.skill})
	if err != nil {
		return err
	}
	bad := 0
	for _, h := range hosts {
		if h.Silent || h.Failing {
			bad++
		}
	}
	if a.json {
		if err := writeJSON(a.stdout, hosts); err != nil {
			return err
		}
	} else {
		tw := newTable(a.stdout)
		header := "HOST\tENVIRONMENT\tVERSION\tLAST SEEN\tCLOCK\tSTATE\tSOURCES"
		if opts.skill != "" {
			header += "\tUSES"
		}
		fmt.Fprintln(tw, header)
		for _, h := range hosts {
			state := "ok"
			switch {
			case h.Silent && h.Failing:
				state = "silent, failing"
			case h.Silent:
				state = "silent"
			case h.Failing:
				state = "failing"
			}
			var srcs []string
			for _, s := range h.Sources {
				item := s.Source + "@" + short(s.Revision)
				if s.Behind {
					item += " (behind)"
				}
				if s.Error != "" {
					item += " (" + s.Status + ": " + s.Error + ")"
				}
				srcs = append(srcs, item)
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", safe(h.Host), safe(h.Environment), safe(h.Version),
				h.LastSeenAt.Format(time.RFC3339), clockText(h), state, safe(strings.Join(srcs, ", ")))
			if opts.skill != "" {
				line += "\t" + strconv.FormatInt(h.Uses, 10)
			}
			fmt.Fprintln(tw, line)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, msg := range fleet.Lookalikes(hosts) {
		a.logWarn(safe(msg))
	}
	if bad > 0 {
		if !a.json {
			a.logError(fmt.Sprintf("%s silent past %s or failing", plural(bad, "host"), opts.staleAfter))
		}
		return reported(errFleetUnhealthy)
	}
	return nil
}

// clockText is a host's clock skew for the table: "-" when not
// measured, "ok" under fleet.MinSkew, else how far ahead or behind.
func clockText(h fleet.HostStatus) string {
	skew, ok := h.ClockSkew()
	switch {
	case !ok:
		return "-"
	case skew.Abs() < fleet.MinSkew:
		return "ok"
	case skew > 0:
		return skew.Round(time.Second).String() + " ahead"
	}
	return (-skew).Round(time.Second).String() + " behind"
}

// short cuts a revision for a table.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

type fleetUsageOptions struct {
	source string
	since  string
}

func newFleetUsageCommand(a *app, runF func(context.Context, *fleetUsageOptions) error) *cobra.Command {
	opts := &fleetUsageOptions{}
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show each skill's use across the fleet",
		Long: `Show per skill the fleet's uses and views in the window, the number of hosts
that used it, and its last use anywhere; the idle ones last.`,
		Example: `  skillsync fleet usage --source team --since 30d
  skillsync fleet usage --json`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runFleetUsage)(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.source, "source", "", "only this marketplace source's skills")
	cmd.Flags().StringVar(&opts.since, "since", "30d", "the window: a duration (30d, 12h) or a date (2026-01-31)")
	return cmd
}

// parseWindow reads --since: a number of days (30d), a Go duration (12h)
// or a date or time parseSince reads.
func parseWindow(s string, now time.Time) (time.Time, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 && n <= 36500 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	if t, err := parseSince(s); err == nil && !t.IsZero() {
		return t, nil
	}
	return time.Time{}, usageError("--since %q: want days (30d), a duration (12h) or a date (2026-01-31)", s)
}

func (a *app) runFleetUsage(ctx context.Context, opts *fleetUsageOptions) error {
	since, err := parseWindow(opts.since, time.Now())
	if err != nil {
		return err
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	w, err := eng.Fleet()
	if err != nil {
		return err
	}
	list, err := w.Usage(ctx, fleet.UsageOptions{Source: opts.source, Since: since})
	if err != nil {
		return err
	}
	if a.json {
		return writeJSON(a.stdout, list)
	}
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "NAME\tSOURCE\tUSES\tVIEWS\tHOSTS\tLAST USED")
	for _, u := range list {
		last := "never"
		if u.LastUsedAt != nil {
			last = u.LastUsedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", safe(u.Name), safe(u.Source), u.Uses, u.Views, u.Hosts, last)
	}
	return tw.Flush()
}

// fleetPush pushes to the fleet store when the config has one, for the
// daemon after each sync and on schedule.fleet_push. A failure is logged,
// never returned: an unreachable store must not fail a sync, and the
// usage goes with the next push.
func fleetPush(ctx context.Context, eng *skillsync.Engine, log *slog.Logger) {
	w, err := eng.Fleet()
	if err != nil {
		return
	}
	rep, err := w.Push(ctx)
	switch {
	case err != nil && fleet.IsUnreachable(err):
		log.Warn("fleet push: the store is unreachable; usage stays local until the next push", "err", err)
	case err != nil:
		log.Error("fleet push", "err", err)
	default:
		log.Info("fleet pushed", "host", rep.Host, "seq", rep.Seq, "records", rep.Sent, "uses", rep.Uses, "views", rep.Views)
		if rep.ClockSkewMS != nil && (time.Duration(*rep.ClockSkewMS)*time.Millisecond).Abs() >= fleet.MinSkew {
			log.Warn("fleet push: this host's clock is off the fleet store's; its uses were dated by the store's clock: set the clock right (NTP)",
				"clock_skew_ms", *rep.ClockSkewMS)
		}
	}
}
