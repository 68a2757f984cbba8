package skillsync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

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
	// Line is where the entry starts in the config file.
	Line int
}

// Type returns the kind of source: "embedded" or "dir".
func (r RepositoryConfig) Type() string {
	if r.Embedded != "" {
		return "embedded"
	}
	return "dir"
}

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
	Repositories []rawRepository
}

type rawRepository struct {
	Name     string
	Embedded string
	Dir      string
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
		"workspace": &r.Workspace,
		"user":      &r.User,
		"global":    &r.Global,
		"strict":    &r.Strict,
		"hidden":    &r.Hidden,
		"repositories": nested(func(n *yaml.Node) []error {
			return decodeList(n, "repositories", func(i int, n *yaml.Node) []error {
				r.Repositories = append(r.Repositories, rawRepository{line: n.Line})
				repo := &r.Repositories[len(r.Repositories)-1]
				return decodeMapping(n, fmt.Sprintf("repositories[%d]", i), fields{
					"name":     &repo.Name,
					"embedded": &repo.Embedded,
					"dir":      &repo.Dir,
				})
			})
		}),
	}
}

// resolve checks the raw config and makes its paths absolute.
func (r *rawConfig) resolve(base string) (*Config, []error) {
	var errs []error
	cfg := &Config{
		Workspace: absPath(base, r.Workspace, base),
		User:      r.User,
		Global:    absPath(base, r.Global, defaultGlobal()),
		Strict:    r.Strict,
		Hidden:    r.Hidden,
	}
	if r.User != "" && (!repositoryPathSafe(r.User) || strings.Contains(r.User, "/")) {
		errs = append(errs, fmt.Errorf("user %q must be one directory name", r.User))
	}
	var names []string
	for i, rr := range r.Repositories {
		where := fmt.Sprintf("line %d: repositories[%d]", rr.line, i)
		repo := RepositoryConfig{Embedded: rr.Embedded, Line: rr.line}
		derived := rr.Embedded
		switch {
		case rr.Embedded != "" && rr.Dir != "":
			errs = append(errs, fmt.Errorf("%s: set one of embedded and dir, not both", where))
			continue
		case rr.Dir != "":
			repo.Dir = absPath(base, rr.Dir, "")
			derived = filepath.Base(repo.Dir)
		case rr.Embedded == "":
			errs = append(errs, fmt.Errorf("%s: set one of embedded: builtin or dir: PATH", where))
			continue
		}
		if rr.Name != "" {
			derived = rr.Name
		}
		names = append(names, repository.SourceName(derived))
		cfg.Repositories = append(cfg.Repositories, repo)
	}
	names, warnings := repository.UniqueNames(names)
	for i := range cfg.Repositories {
		cfg.Repositories[i].Name = names[i]
	}
	cfg.Warnings = warnings
	return cfg, errs
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
