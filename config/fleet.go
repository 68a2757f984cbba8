package config

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/internal/cronspec"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/hostid"
	"github.com/skillsync/skillsync/repository"
)

// Fleet is the fleet: section: the PostgreSQL store every host of a team
// pushes its heartbeat and usage to. Nil when the config has none.
type Fleet struct {
	// Postgres names the environment variable holding the connection
	// string; DSNFile a file holding it instead. Exactly one is set. The
	// connection string itself is a secret and never kept here.
	Postgres string
	DSNFile  string
	// Schema holds the fleet's tables (default skillsync_fleet).
	Schema string
	// Create makes skillsync create or migrate the schema.
	Create bool
	// Host is this machine's id; "" means the default (host name and a
	// short hash of the workspace path), decided by the engine.
	Host string
	// Environment is this host's environment (prod, staging...), for
	// staged rollout.
	Environment string
	// Timeout bounds one push or query (default 10s).
	Timeout time.Duration
	// Push is the daemon's schedule for pushes (schedule.fleet_push).
	Push string
	// MinHosts is how many hosts must have reported in the window before
	// curation decides on fleet data (curator.min_hosts).
	MinHosts int
	// Line is where the section starts in the config file.
	Line int
}

// Fleet defaults.
const (
	DefaultFleetSchema   = "skillsync_fleet"
	DefaultFleetPush     = "@every 5m"
	DefaultFleetTimeout  = 10 * time.Second
	DefaultFleetMinHosts = 2
)

// rawFleet mirrors the fleet: keys.
type rawFleet struct {
	set         bool
	Postgres    string
	DSNFile     string
	Schema      string
	Create      bool
	Host        string
	Environment string
	Timeout     time.Duration
	line        int
	lines       keyLines
}

func (f *rawFleet) decode(n *yaml.Node) []error {
	f.set, f.line = true, n.Line
	var errs []error
	f.lines, errs = decodeMappingLines(n, "fleet", fields{
		"postgres":    &f.Postgres,
		"dsn_file":    &f.DSNFile,
		"schema":      &f.Schema,
		"create":      &f.Create,
		"host":        &f.Host,
		"environment": &f.Environment,
		"timeout":     &f.Timeout,
	})
	return errs
}

// fleetSchemaName is compiled at its first use: {0,62} made it the
// costliest regexp of the CLI's start.
var fleetSchemaName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// resolveFleet checks the fleet: section, schedule.fleet_push and
// curator.min_hosts.
func (r *rawConfig) resolveFleet(env hostenv.Env, base string, cfg *Config) []error {
	f := r.Fleet
	if !f.set {
		if r.Schedule.FleetPush != "" || r.Curator.MinHosts != nil {
			return []error{fmt.Errorf("line %d: schedule.fleet_push and curator.min_hosts need a fleet: section; add one, or take them out", max(r.Schedule.lines.at("fleet_push", 0), r.Curator.lines.at("min_hosts", 0)))}
		}
		return nil
	}
	var errs []error
	// where names the line of key, else the section's.
	where := func(key string) string { return fmt.Sprintf("line %d: fleet", f.lines.at(key, f.line)) }
	out := &Fleet{Postgres: f.Postgres, Schema: f.Schema, Create: f.Create, Host: f.Host, Environment: f.Environment,
		Timeout: f.Timeout, Push: r.Schedule.FleetPush, MinHosts: DefaultFleetMinHosts, Line: f.line}
	if (f.Postgres == "") == (f.DSNFile == "") {
		errs = append(errs, fmt.Errorf("%s: set exactly one of postgres: (an environment variable holding the connection string) and dsn_file:", where("postgres")))
	}
	if f.DSNFile != "" {
		out.DSNFile = absPath(env, base, f.DSNFile, "")
	}
	if err := repository.Literal(f.DSNFile); err != nil {
		errs = append(errs, fmt.Errorf("%s: dsn_file: %w", where("dsn_file"), err))
	}
	if strings.Contains(f.Postgres, "://") || strings.Contains(f.Postgres, "=") {
		// Never echo it: it may be the connection string itself.
		errs = append(errs, fmt.Errorf("%s: postgres: names an environment variable holding the connection string, such as SKILLSYNC_FLEET_DSN, not the string itself", where("postgres")))
	}
	if out.Schema == "" {
		out.Schema = DefaultFleetSchema
	}
	if !fleetSchemaName().MatchString(out.Schema) {
		errs = append(errs, fmt.Errorf("%s: schema %q: use lower-case letters, digits and _ (at most 63), such as %s (the default)", where("schema"), out.Schema, DefaultFleetSchema))
	}
	if f.Host != "" && !hostid.Valid(f.Host) {
		errs = append(errs, fmt.Errorf("%s: host %q: use 1 to 200 printable characters, no control characters", where("host"), f.Host))
	}
	if f.Environment != "" && (!hostid.Valid(f.Environment) || strings.ContainsAny(f.Environment, " \t,")) {
		errs = append(errs, fmt.Errorf("%s: environment %q: use one word of printable characters, such as prod or staging", where("environment"), f.Environment))
	}
	if f.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%s: timeout %s: write a positive duration, such as 10s (the default)", where("timeout"), f.Timeout))
	}
	if out.Timeout == 0 {
		out.Timeout = DefaultFleetTimeout
	}
	if out.Push == "" {
		out.Push = DefaultFleetPush
	}
	if err := cronspec.Check(out.Push); err != nil {
		errs = append(errs, fmt.Errorf("line %d: schedule.fleet_push %q does not parse: %w", r.Schedule.lines.at("fleet_push", r.Schedule.line), out.Push, err))
	}
	if n := r.Curator.MinHosts; n != nil {
		if *n < 1 {
			errs = append(errs, fmt.Errorf("line %d: curator: min_hosts %d: write 1 or more, such as %d (the default)", r.Curator.lines.at("min_hosts", r.Curator.line), *n, DefaultFleetMinHosts))
		}
		out.MinHosts = *n
	}
	cfg.Fleet = out
	return errs
}
