package skillsync

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/repository"
)

// ConfigFile is the name skillsync looks for in the current directory.
const ConfigFile = "skillsync.yaml"

// Config is a loaded skillsync.yaml. Every path in it is absolute.
type Config struct {
	// File is where the config was read from; "" for the built-in default.
	File string
	// Workspace holds skills/ (layer 3), <user>/skills/ (layer 4) and the
	// cache.
	Workspace string
	// User names the user layer; "" leaves it out.
	User string
	// Global is the directory of layer 1.
	Global string
	// Strict turns every warning into an error.
	Strict bool
	// Hidden names stay out of list, search and prompt.
	Hidden []string
	// Repositories are the marketplace layer, lowest priority first.
	Repositories []RepositoryConfig
	// MaxFileSize makes a skill with a larger file an error.
	MaxFileSize int64
	// Targets are the directories agents read, which receive every winner.
	Targets []TargetConfig
	// Curator is when idle skills become stale and archived.
	Curator curator.Policy
	// Schedule is when the daemon syncs and curates.
	Schedule ScheduleConfig
	// Warnings found while loading that did not stop it.
	Warnings []string
}

// RepositoryConfig is one entry of repositories:.
type RepositoryConfig struct {
	// Name is the source name, unique in the config.
	Name string
	// Embedded names a file system compiled into the program ("builtin").
	Embedded string
	// Dir is a local directory.
	Dir string
	// Git is a remote URL; Ref, Path, Depth, Timeout and Auth go with it.
	Git     string
	Ref     string
	Path    string
	Depth   int
	Timeout time.Duration
	Auth    AuthConfig
	// Line is where the entry starts in the config file.
	Line int
}

// AuthConfig says where a git source's credentials are. It holds no
// secret itself: passwords are read from the environment or a file at
// every fetch.
type AuthConfig struct {
	Username            string `yaml:"username"`
	PasswordEnv         string `yaml:"password_env"`
	PasswordFile        string `yaml:"password_file"`
	SSHKeyFile          string `yaml:"ssh_key_file"`
	SSHKeyPassphraseEnv string `yaml:"ssh_key_passphrase_env"`
	KnownHostsFile      string `yaml:"known_hosts_file"`
}

// Type returns the kind of source: "embedded", "dir" or "git".
func (r RepositoryConfig) Type() string {
	switch {
	case r.Embedded != "":
		return "embedded"
	case r.Git != "":
		return "git"
	}
	return "dir"
}

// ScheduleConfig holds the daemon's cron expressions.
type ScheduleConfig struct {
	Sync   string
	Curate string
}

// The daemon's default schedules.
const (
	DefaultSyncSchedule   = "@every 15m"
	DefaultCurateSchedule = "0 3 * * *"
)

// TargetConfig is one entry of targets:.
type TargetConfig struct {
	// Dir is absolute.
	Dir string
	// Mode is "copy" (the default) or "symlink".
	Mode string
}

// AgentTarget returns the directory an agent reads skills from, relative
// to the workspace: claude, codex or opencode.
func AgentTarget(agent string) (string, bool) {
	switch agent {
	case "claude":
		return ".claude/skills", true
	case "codex":
		return ".agents/skills", true
	case "opencode":
		return ".opencode/skills", true
	}
	return "", false
}

// DefaultMaxFileSize is the largest file a skill may hold when the config
// does not say.
const DefaultMaxFileSize = 10 << 20

// DefaultDepth is the history fetched when a git source does not say: one
// commit is all skillsync reads.
const DefaultDepth = 1

// ConfigError is a config that does not load. Its message names the file
// and the line of every mistake.
type ConfigError struct {
	File string
	Errs []error
}

func (e *ConfigError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			msgs[i] = e.File + ":" + rest
		} else {
			msgs[i] = e.File + ": " + msg
		}
	}
	return strings.Join(msgs, "\n")
}

// DefaultConfig is the configuration used when there is no config file:
// the current directory as the workspace and the built-in skills as the
// only marketplace source.
func DefaultConfig() (*Config, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("find the current directory: %w", err)
	}
	return &Config{
		Workspace:    wd,
		Global:       defaultGlobal(),
		Repositories: []RepositoryConfig{{Name: "builtin", Embedded: "builtin"}},
		MaxFileSize:  DefaultMaxFileSize,
		Curator:      curator.DefaultPolicy(),
		Schedule:     ScheduleConfig{Sync: DefaultSyncSchedule, Curate: DefaultCurateSchedule},
	}, nil
}

// FindConfig loads the config named by explicit, else by
// $SKILLSYNC_CONFIG, else ./skillsync.yaml; with none of them it returns
// DefaultConfig. A file named explicitly or by the environment must exist.
func FindConfig(explicit string) (*Config, error) {
	name := explicit
	if name == "" {
		name = os.Getenv("SKILLSYNC_CONFIG")
	}
	if name != "" {
		return LoadConfig(name)
	}
	if _, err := os.Stat(ConfigFile); err == nil {
		return LoadConfig(ConfigFile)
	}
	return DefaultConfig()
}

// rawConfig mirrors the file's keys.
type rawConfig struct {
	Workspace    string
	User         string
	Global       string
	Strict       bool
	Hidden       []string
	MaxFileSize  *int64
	Repositories []rawRepository
	Targets      []rawTarget
	Curator      struct {
		StaleAfter, ArchiveAfter, MinIdle *time.Duration
		Layers                            []string
		line                              int
	}
	Schedule struct {
		Sync, Curate string
		line         int
	}
}

type rawTarget struct {
	Dir  string
	Mode string
	line int
}

type rawRepository struct {
	Name     string
	Embedded string
	Dir      string
	Git      string
	Ref      string
	Path     string
	Depth    *int
	Timeout  time.Duration
	Auth     AuthConfig
	line     int
}

// LoadConfig reads and checks the config file at name. Relative paths in
// it are taken from the file's directory.
func LoadConfig(name string) (*Config, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ConfigError{File: abs, Errs: []error{errors.New(strings.TrimPrefix(err.Error(), "yaml: "))}}
	}
	var raw rawConfig
	var errs []error
	if len(doc.Content) > 0 {
		errs = decodeMapping(doc.Content[0], "the config", raw.fields())
	}
	if len(errs) > 0 {
		return nil, &ConfigError{File: abs, Errs: errs}
	}
	cfg, errs := raw.resolve(filepath.Dir(abs))
	if len(errs) > 0 {
		return nil, &ConfigError{File: abs, Errs: errs}
	}
	cfg.File = abs
	return cfg, nil
}

func (r *rawConfig) fields() fields {
	return fields{
		"workspace":     &r.Workspace,
		"user":          &r.User,
		"global":        &r.Global,
		"strict":        &r.Strict,
		"hidden":        &r.Hidden,
		"max_file_size": &r.MaxFileSize,
		"curator": nested(func(n *yaml.Node) []error {
			c := &r.Curator
			c.line = n.Line
			return decodeMapping(n, "curator", fields{
				"stale_after": &c.StaleAfter, "archive_after": &c.ArchiveAfter, "min_idle": &c.MinIdle, "layers": &c.Layers,
			})
		}),
		"schedule": nested(func(n *yaml.Node) []error {
			r.Schedule.line = n.Line
			return decodeMapping(n, "schedule", fields{"sync": &r.Schedule.Sync, "curate": &r.Schedule.Curate})
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
				r.Repositories = append(r.Repositories, rawRepository{line: n.Line})
				repo := &r.Repositories[len(r.Repositories)-1]
				where := fmt.Sprintf("repositories[%d]", i)
				return decodeMapping(n, where, fields{
					"name":     &repo.Name,
					"embedded": &repo.Embedded,
					"dir":      &repo.Dir,
					"git":      &repo.Git,
					"ref":      &repo.Ref,
					"path":     &repo.Path,
					"depth":    &repo.Depth,
					"timeout":  &repo.Timeout,
					"auth": nested(func(n *yaml.Node) []error {
						a := &repo.Auth
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
			})
		}),
	}
}

// resolve checks the raw config and makes its paths absolute.
func (r *rawConfig) resolve(base string) (*Config, []error) {
	var errs []error
	cfg := &Config{
		Workspace:   absPath(base, r.Workspace, base),
		User:        r.User,
		Global:      absPath(base, r.Global, defaultGlobal()),
		Strict:      r.Strict,
		Hidden:      r.Hidden,
		MaxFileSize: DefaultMaxFileSize,
	}
	if r.MaxFileSize != nil {
		if *r.MaxFileSize <= 0 {
			errs = append(errs, fmt.Errorf("max_file_size must be a positive number of bytes"))
		}
		cfg.MaxFileSize = *r.MaxFileSize
	}
	if r.User != "" && (!repositoryPathSafe(r.User) || strings.Contains(r.User, "/")) {
		errs = append(errs, fmt.Errorf("user %q must be one directory name", r.User))
	}
	var names []string
	for i, rr := range r.Repositories {
		where := fmt.Sprintf("line %d: repositories[%d]", rr.line, i)
		repo, derived, err := rr.resolve(base, where)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if rr.Name != "" {
			derived = rr.Name
		}
		names = append(names, repository.SourceName(derived))
		cfg.Repositories = append(cfg.Repositories, repo)
	}
	for i, t := range r.Targets {
		where := fmt.Sprintf("line %d: targets[%d]", t.line, i)
		mode := cmp.Or(t.Mode, "copy")
		switch {
		case t.Dir == "":
			errs = append(errs, fmt.Errorf("%s: dir is required", where))
		case mode != "copy" && mode != "symlink":
			errs = append(errs, fmt.Errorf("%s: mode %q: use copy or symlink", where, t.Mode))
		default:
			cfg.Targets = append(cfg.Targets, TargetConfig{Dir: absPath(cfg.Workspace, t.Dir, ""), Mode: mode})
		}
	}
	errs = append(errs, r.resolveCurator(cfg)...)
	names, warnings := repository.UniqueNames(names)
	for i := range cfg.Repositories {
		cfg.Repositories[i].Name = names[i]
	}
	cfg.Warnings = warnings
	return cfg, errs
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
	cfg.Schedule = ScheduleConfig{Sync: cmp.Or(r.Schedule.Sync, DefaultSyncSchedule), Curate: cmp.Or(r.Schedule.Curate, DefaultCurateSchedule)}
	for _, f := range [][2]string{{"sync", cfg.Schedule.Sync}, {"curate", cfg.Schedule.Curate}} {
		if err := daemon.ParseSchedule(f[0], f[1]); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", r.Schedule.line, err))
		}
	}
	return errs
}

// resolve checks one repositories: entry and derives its source name.
func (rr rawRepository) resolve(base, where string) (RepositoryConfig, string, error) {
	repo := RepositoryConfig{Embedded: rr.Embedded, Git: rr.Git, Ref: rr.Ref, Path: rr.Path,
		Depth: DefaultDepth, Timeout: rr.Timeout, Auth: rr.Auth, Line: rr.line}
	kinds := 0
	for _, v := range []string{rr.Embedded, rr.Dir, rr.Git} {
		if v != "" {
			kinds++
		}
	}
	if kinds != 1 {
		return repo, "", fmt.Errorf("%s: set exactly one of embedded: builtin, dir: PATH or git: URL", where)
	}
	gitOnly := rr.Ref != "" || rr.Path != "" || rr.Depth != nil || rr.Timeout != 0 || rr.Auth != (AuthConfig{})
	if rr.Git == "" && gitOnly {
		return repo, "", fmt.Errorf("%s: ref, path, depth, timeout and auth belong to git: sources", where)
	}
	switch {
	case rr.Dir != "":
		repo.Dir = absPath(base, rr.Dir, "")
		return repo, filepath.Base(repo.Dir), nil
	case rr.Git != "":
		if p := rr.Path; p != "" && (filepath.IsAbs(p) || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")) {
			return repo, "", fmt.Errorf("%s: path %q must stay inside the repository: no .., not absolute", where, p)
		}
		if rr.Depth != nil {
			if *rr.Depth < 0 {
				return repo, "", fmt.Errorf("%s: depth must be 0 (full history) or more", where)
			}
			repo.Depth = *rr.Depth
		}
		if rr.Timeout < 0 {
			return repo, "", fmt.Errorf("%s: timeout must be positive", where)
		}
		for _, f := range []*string{&repo.Auth.PasswordFile, &repo.Auth.SSHKeyFile, &repo.Auth.KnownHostsFile} {
			if *f != "" {
				*f = absPath(base, *f, "")
			}
		}
		return repo, repository.RepoName(rr.Git), nil
	}
	return repo, rr.Embedded, nil
}

func repositoryPathSafe(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "\\\x00")
}

// absPath expands ~ and makes p absolute from base; "" gives def.
func absPath(base, p, def string) string {
	if p == "" {
		return def
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// defaultGlobal is $XDG_CONFIG_HOME/skillsync/skills.
func defaultGlobal() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "skillsync", "skills")
}
