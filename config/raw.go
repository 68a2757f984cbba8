package config

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// rawConfig mirrors the file's keys.
type rawConfig struct {
	Workspace     string
	User          string
	Global        string
	Strict        bool
	Hidden        []string
	MaxFileSize   *int64
	MaxSkillSize  *int64
	MaxSourceSize *int64
	MaxEntries    *int
	MaxFetchSize  *int64
	GitHost       string
	Repositories  []rawSource
	Targets       []rawTarget
	Curator       struct {
		StaleAfter, ArchiveAfter, MinIdle *time.Duration
		Layers                            []string
		line                              int
	}
	Schedule struct {
		Sync, Curate, Import string
		StatCheckEvery       *int
		line                 int
	}
	Promotion struct {
		Approvers, Targets []string
		Auto               bool
		line               int
	}
}

type rawTarget struct {
	Dir  string
	Mode string
	line int
}

type rawSource struct {
	Name                   string
	Embedded               string
	Dir                    string
	Git                    string
	Ref                    string
	Path                   string
	Depth                  *int
	Timeout                time.Duration
	Auth                   repository.GitAuth
	AllowInlineCredentials bool
	Publish                string
	Postgres               string
	DSNFile                string
	Schema                 string
	Create                 bool
	Skills                 []string
	Exclude                []string
	line                   int
}

func (r *rawConfig) fields() fields {
	return fields{
		"workspace":       &r.Workspace,
		"user":            &r.User,
		"global":          &r.Global,
		"strict":          &r.Strict,
		"hidden":          &r.Hidden,
		"max_file_size":   &r.MaxFileSize,
		"max_skill_size":  &r.MaxSkillSize,
		"max_source_size": &r.MaxSourceSize,
		"max_entries":     &r.MaxEntries,
		"max_fetch_size":  &r.MaxFetchSize,
		// where skillsync add resolves owner/repo
		"default_git_host": &r.GitHost,
		"curator": nested(func(n *yaml.Node) []error {
			c := &r.Curator
			c.line = n.Line
			return decodeMapping(n, "curator", fields{
				"stale_after": &c.StaleAfter, "archive_after": &c.ArchiveAfter, "min_idle": &c.MinIdle, "layers": &c.Layers,
			})
		}),
		"schedule": nested(func(n *yaml.Node) []error {
			r.Schedule.line = n.Line
			return decodeMapping(n, "schedule", fields{"sync": &r.Schedule.Sync, "curate": &r.Schedule.Curate, "import": &r.Schedule.Import, "stat_check_every": &r.Schedule.StatCheckEvery})
		}),
		"promotion": nested(func(n *yaml.Node) []error {
			p := &r.Promotion
			p.line = n.Line
			return decodeMapping(n, "promotion", fields{"approvers": &p.Approvers, "targets": &p.Targets, "auto": &p.Auto})
		}),
		"targets": nested(func(n *yaml.Node) []error {
			return decodeList(n, "targets", func(i int, n *yaml.Node) []error {
				r.Targets = append(r.Targets, rawTarget{line: n.Line})
				t := &r.Targets[len(r.Targets)-1]
				return decodeMapping(n, fmt.Sprintf("targets[%d]", i), fields{"dir": &t.Dir, "mode": &t.Mode})
			})
		}),
		"repositories": nested(func(n *yaml.Node) []error {
			return decodeList(n, "repositories", func(i int, n *yaml.Node) []error {
				r.Repositories = append(r.Repositories, rawSource{line: n.Line})
				return r.Repositories[len(r.Repositories)-1].decode(n, fmt.Sprintf("repositories[%d]", i))
			})
		}),
	}
}

func (rs *rawSource) decode(n *yaml.Node, where string) []error {
	return decodeMapping(n, where, fields{
		"name":                     &rs.Name,
		"embedded":                 &rs.Embedded,
		"dir":                      &rs.Dir,
		"git":                      &rs.Git,
		"ref":                      &rs.Ref,
		"path":                     &rs.Path,
		"depth":                    &rs.Depth,
		"timeout":                  &rs.Timeout,
		"allow_inline_credentials": &rs.AllowInlineCredentials,
		"publish":                  &rs.Publish,
		"postgres":                 &rs.Postgres,
		"dsn_file":                 &rs.DSNFile,
		"schema":                   &rs.Schema,
		"create":                   &rs.Create,
		"skills":                   &rs.Skills,
		"exclude":                  &rs.Exclude,
		"auth": nested(func(n *yaml.Node) []error {
			a := &rs.Auth
			return decodeMapping(n, where+".auth", fields{
				"username":               &a.Username,
				"password_env":           &a.PasswordEnv,
				"password_file":          &a.PasswordFile,
				"ssh_key_file":           &a.SSHKeyFile,
				"ssh_key_passphrase_env": &a.SSHKeyPassphraseEnv,
				"known_hosts_file":       &a.KnownHostsFile,
			})
		}),
	})
}

// resolve checks the raw config and makes its paths absolute.
func (r *rawConfig) resolve(env hostenv.Env, base string) (*Config, []error) {
	var errs []error
	cfg := &Config{
		Workspace: absPath(env, base, r.Workspace, base),
		User:      r.User,
		Global:    absPath(env, base, r.Global, defaultGlobal(env)),
		Strict:    r.Strict,
		Hidden:    r.Hidden,
		Limits:    Limits{MaxFileSize: DefaultMaxFileSize},

		DefaultGitHost: r.GitHost,
	}
	if err := checkWorkspace(cfg.Workspace); err != nil {
		errs = append(errs, err)
	}
	for _, l := range []struct {
		key string
		v   *int64
		dst *int64
	}{{"max_file_size", r.MaxFileSize, &cfg.Limits.MaxFileSize}, {"max_skill_size", r.MaxSkillSize, &cfg.Limits.MaxSkillSize}, {"max_source_size", r.MaxSourceSize, &cfg.Limits.MaxSourceSize}, {"max_fetch_size", r.MaxFetchSize, &cfg.Limits.MaxFetchSize}} {
		if l.v == nil {
			continue
		}
		if *l.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be a positive number of bytes", l.key))
		}
		*l.dst = *l.v
	}
	if r.MaxEntries != nil {
		if *r.MaxEntries <= 0 {
			errs = append(errs, fmt.Errorf("max_entries must be a positive number"))
		}
		cfg.Limits.MaxEntries = *r.MaxEntries
	}
	if r.User != "" && !oneComponent(r.User) {
		errs = append(errs, fmt.Errorf("user %q must be one directory name", r.User))
	}
	var names []string
	for i, rs := range r.Repositories {
		src, err := rs.resolve(env, base, fmt.Sprintf("line %d: repositories[%d]", rs.line, i))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		names = append(names, src.Name)
		cfg.Sources = append(cfg.Sources, src)
	}
	names, warnings := repository.UniqueNames(names)
	for i := range cfg.Sources {
		cfg.Sources[i].Name = names[i]
	}
	cfg.Warnings = warnings
	for i, t := range r.Targets {
		where := fmt.Sprintf("line %d: targets[%d]", t.line, i)
		mode := materialize.TargetMode(cmp.Or(t.Mode, string(materialize.Copy)))
		switch {
		case t.Dir == "":
			errs = append(errs, fmt.Errorf("%s: dir is required", where))
		case mode != materialize.Copy && mode != materialize.Symlink:
			errs = append(errs, fmt.Errorf("%s: mode %q: use copy or symlink", where, t.Mode))
		default:
			cfg.Targets = append(cfg.Targets, Target{Dir: absPath(env, cfg.Workspace, t.Dir, ""), Mode: mode, Line: t.line})
		}
	}
	errs = append(errs, checkTargets(env, cfg)...)
	errs = append(errs, r.resolveCurator(cfg)...)
	errs = append(errs, r.resolvePromotion(cfg)...)
	return cfg, errs
}

// resolvePromotion checks the promotion gate: every target is a local
// layer that is on or a configured source. Whether that source's kind
// takes promotions is decided when one is made.
func (r *rawConfig) resolvePromotion(cfg *Config) []error {
	p := r.Promotion
	cfg.Promotion = Promotion{Approvers: p.Approvers, Targets: p.Targets, Auto: p.Auto, Line: p.line}
	var errs []error
	for _, a := range p.Approvers {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, fmt.Errorf("line %d: promotion: an approver is empty", p.line))
		}
	}
	for _, t := range p.Targets {
		switch {
		case t == PromoteWorkspace:
		case t == PromoteUser:
			if cfg.User == "" {
				errs = append(errs, fmt.Errorf("line %d: promotion: target user needs user: set (the user layer is off)", p.line))
			}
		case !slices.ContainsFunc(cfg.Sources, func(s Source) bool { return s.Name == t }):
			errs = append(errs, fmt.Errorf("line %d: promotion: target %q is not workspace, user or the name of a source in repositories:", p.line, t))
		}
	}
	return errs
}

// resolveCurator checks the curator and schedule sections.
func (r *rawConfig) resolveCurator(cfg *Config) []error {
	var errs []error
	c := r.Curator
	cfg.Curator = curator.DefaultPolicy()
	for _, d := range []struct {
		v   *time.Duration
		dst *time.Duration
	}{{c.StaleAfter, &cfg.Curator.StaleAfter}, {c.ArchiveAfter, &cfg.Curator.ArchiveAfter}, {c.MinIdle, &cfg.Curator.MinIdle}} {
		if d.v != nil {
			*d.dst = *d.v
		}
	}
	if cfg.Curator.StaleAfter <= 0 || cfg.Curator.ArchiveAfter <= 0 || cfg.Curator.MinIdle < 0 {
		errs = append(errs, fmt.Errorf("line %d: curator: stale_after and archive_after must be positive, min_idle not negative", c.line))
	}
	if cfg.Curator.ArchiveAfter < cfg.Curator.StaleAfter {
		errs = append(errs, fmt.Errorf("line %d: curator: archive_after (%s) is shorter than stale_after (%s)", c.line, cfg.Curator.ArchiveAfter, cfg.Curator.StaleAfter))
	}
	if c.Layers != nil {
		cfg.Curator.Layers = c.Layers
		for _, l := range c.Layers {
			if l != "workspace" && l != "user" && l != "marketplace" {
				errs = append(errs, fmt.Errorf("line %d: curator: layer %q: use workspace, user or marketplace", c.line, l))
			}
		}
	}
	cfg.Schedule = Schedule{Sync: cmp.Or(r.Schedule.Sync, DefaultSyncSchedule), Curate: cmp.Or(r.Schedule.Curate, DefaultCurateSchedule),
		Import: cmp.Or(r.Schedule.Import, DefaultImportSchedule), StatCheckEvery: DefaultStatCheckEvery}
	if n := r.Schedule.StatCheckEvery; n != nil {
		if *n < 0 {
			errs = append(errs, fmt.Errorf("line %d: schedule: stat_check_every must be 0 (never) or more", r.Schedule.line))
		}
		cfg.Schedule.StatCheckEvery = *n
	}
	for _, f := range [][2]string{{"sync", cfg.Schedule.Sync}, {"curate", cfg.Schedule.Curate}, {"import", cfg.Schedule.Import}} {
		if err := daemon.ParseSchedule(f[0], f[1]); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", r.Schedule.line, err))
		}
	}
	return errs
}

// resolve checks one repositories: entry and names it.
func (rs rawSource) resolve(env hostenv.Env, base, where string) (Source, error) {
	src := Source{Embedded: rs.Embedded, Git: rs.Git, Ref: rs.Ref, Path: rs.Path,
		Depth: DefaultDepth, Timeout: rs.Timeout, Auth: rs.Auth, Line: rs.line,
		Postgres: rs.Postgres, Schema: rs.Schema, Create: rs.Create, Skills: rs.Skills, Exclude: rs.Exclude}
	kinds := 0
	for _, v := range []string{rs.Embedded, rs.Dir, rs.Git, rs.Postgres + rs.DSNFile} {
		if v != "" {
			kinds++
		}
	}
	if kinds != 1 {
		return src, fmt.Errorf("%s: set exactly one of embedded: builtin, dir: PATH, git: URL or postgres: ENV_NAME (or dsn_file: PATH)", where)
	}
	gitOnly := rs.Ref != "" || rs.Path != "" || rs.Depth != nil || rs.Auth != (repository.GitAuth{}) || rs.AllowInlineCredentials || rs.Publish != ""
	if rs.Git == "" && gitOnly {
		return src, fmt.Errorf("%s: ref, path, depth, auth, allow_inline_credentials and publish belong to git: sources", where)
	}
	switch rs.Publish {
	case "", PublishBranch:
	case PublishDirect:
		src.PublishDirect = true
	default:
		return src, fmt.Errorf("%s: publish %q: use branch (a review branch per skill, the default) or direct (push to the tracked branch)", where, rs.Publish)
	}
	pgOnly := rs.Schema != "" || rs.Create
	if rs.Postgres+rs.DSNFile == "" && pgOnly {
		return src, fmt.Errorf("%s: schema and create belong to postgres: sources", where)
	}
	if rs.Timeout < 0 {
		return src, fmt.Errorf("%s: timeout must be positive", where)
	}
	sel := repository.Options{Include: rs.Skills, Exclude: rs.Exclude}
	if err := sel.Validate(); err != nil {
		return src, fmt.Errorf("%s: %w", where, err)
	}
	var derived string
	switch {
	case rs.Dir != "":
		src.Kind, src.Dir = repository.KindDir, absPath(env, base, rs.Dir, "")
		derived = filepath.Base(src.Dir)
	case rs.Git != "":
		src.Kind = repository.KindGit
		if err := rs.checkGit(where); err != nil {
			return src, err
		}
		if rs.Depth != nil {
			src.Depth = *rs.Depth
		}
		for _, f := range []*string{&src.Auth.PasswordFile, &src.Auth.SSHKeyFile, &src.Auth.KnownHostsFile} {
			if *f != "" {
				*f = absPath(env, base, *f, "")
			}
		}
		derived = repository.RepoName(rs.Git)
	case rs.Postgres != "" || rs.DSNFile != "":
		if rs.Postgres != "" && rs.DSNFile != "" {
			return src, fmt.Errorf("%s: set one of postgres: ENV_NAME and dsn_file: PATH, not both", where)
		}
		src.Kind = repository.KindPostgres
		if rs.DSNFile != "" {
			src.DSNFile = absPath(env, base, rs.DSNFile, "")
		}
		derived = cmp.Or(rs.Schema, "postgres")
	default:
		src.Kind = repository.KindEmbedded
		derived = rs.Embedded
	}
	src.Name = repository.SourceName(cmp.Or(rs.Name, derived))
	return src, nil
}

// checkGit checks the settings of a git source.
func (rs rawSource) checkGit(where string) error {
	if p := rs.Path; p != "" && (filepath.IsAbs(p) || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")) {
		return fmt.Errorf("%s: path %q must stay inside the repository: no .., not absolute", where, p)
	}
	if rs.Depth != nil && *rs.Depth < 0 {
		return fmt.Errorf("%s: depth must be 0 (full history) or more", where)
	}
	if repository.HasInlinePassword(rs.Git) && !rs.AllowInlineCredentials {
		return fmt.Errorf("%s: the git URL holds a password (%s); a config is often committed and shown, so put the secret in auth.password_env or auth.password_file instead, or set allow_inline_credentials: true to accept it",
			where, repository.RedactURL(rs.Git))
	}
	return nil
}

// oneComponent reports whether s is one directory name.
func oneComponent(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}
