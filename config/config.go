// Package config loads skillsync.yaml: it decodes the file with the line of
// every mistake, checks it, makes its paths absolute, and edits it keeping
// its comments (init, add, remove). It reads no source.
package config

import (
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/termtext"

	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/workspace"
)

// FileName is the name skillsync looks for in the current directory.
const FileName = workspace.ConfigName

// Config is a loaded skillsync.yaml. Every path in it is absolute.
type Config struct {
	// File is where the config was read from; "" for the built-in default.
	File string
	// FileInfo is File's stat data as Load read it, taken from the opened
	// file before the read: an edit made since, even one landing while
	// Load ran, makes the file differ from it. nil when not read (the
	// built-in default, a config an edit returns).
	FileInfo os.FileInfo
	// Workspace holds skills/ (layer 3), <user>/skills/ (layer 4) and the
	// cache.
	Workspace string
	// User names the user layer; "" leaves it out.
	User string
	// Global is the directory of layer 1.
	Global string
	// Strict turns every warning into an error.
	Strict bool
	// Hidden names stay out of list, search, prompt, read and use.
	Hidden []string
	// Sources are the marketplace layer, lowest priority first.
	Sources []Source
	// Limits bound the work one source can cause.
	Limits Limits
	// Targets are the directories agents read, which receive every winner.
	Targets []Target
	// AgentsMD are the files (targets entries with agents_md:) where the
	// list of skills is kept for agents that read AGENTS.md and no skills
	// folder; in the order of targets:.
	AgentsMD []AgentsMDTarget
	// Above is the config file in a folder above the workspace when this
	// is the built-in default in a subfolder of that one's workspace (Find
	// found no config here): a command that writes would start a second
	// workspace inside it.
	Above string
	// NoTarget is set when targets: is empty on purpose: init --agent none
	// wrote it with NoTargetComment, so add does not look for agents.
	NoTarget bool
	// Curator is when idle skills become stale and archived.
	Curator Curation
	// Schedule is when the daemon syncs and curates.
	Schedule Schedule
	// Daemon configures skillsync daemon beyond its schedules.
	Daemon Daemon
	// DefaultGitHost is where skillsync add looks for owner/repo;
	// "" means GitHub (see GitHost).
	DefaultGitHost string
	// Promotion is the gate drafts pass to become skills.
	Promotion Promotion
	// Fleet is the fleet store; nil without a fleet: section.
	Fleet *Fleet
	// Warnings found while loading that did not stop it, each naming the
	// file (and the line) it is about.
	Warnings []string
}

// LocalDirs are the folders the config's dir: sources read, as given.
func (c *Config) LocalDirs() []string {
	var dirs []string
	for _, s := range c.Sources {
		if d, ok := s.Settings.(Directory); ok && d.Directory() != "" {
			dirs = append(dirs, d.Directory())
		}
	}
	return dirs
}

// Layout returns the workspace's on-disk layout.
func (c *Config) Layout() workspace.Layout { return workspace.New(c.Workspace, c.User) }

// Source is one entry of repositories:.
type Source struct {
	// Name is the source name, unique in the config and one safe path
	// component.
	Name string
	// Kind is the kind whose location key the entry sets (git:, dir:, ...).
	Kind repository.Kind
	// Settings are the kind's own keys, decoded and checked by the kind;
	// what they can tell (a location for the lock, ...) they tell through
	// abilities (repository.Locator, ...).
	Settings repository.Settings
	// Timeout bounds the source's network operations and its discovery.
	Timeout time.Duration
	// Skills selects the source's skills by name or glob (skills:), and
	// Exclude leaves some out (exclude:); empty Skills keeps every skill.
	Skills  []string
	Exclude []string
	// Plugins keeps only the skills of these plugin groups of the
	// source's .claude-plugin/marketplace.json (plugins:); empty reads
	// the whole source.
	Plugins []string
	// Line is where the entry starts in the config file.
	Line int
}

// Promotion is the promotion: section, the gate between a draft and a
// skill.
type Promotion struct {
	// Approvers may approve a promotion; empty lets any named approver.
	Approvers []string
	// Targets are where drafts may go: workspace, user or a source name;
	// empty allows the workspace and user layers and no source.
	Targets []string
	// Auto promotes a draft with no problem when it is proposed, to the
	// first target.
	Auto bool
	// Line is where the section starts in the config file, 0 when absent.
	Line int
}

// The promotion targets that are local layers rather than sources.
const (
	PromoteWorkspace = "workspace"
	PromoteUser      = "user"
)

// Limits bound what one source may make skillsync read. Zero means the
// default of each.
type Limits struct {
	// MaxFileSize makes a skill with a larger file an error.
	MaxFileSize int64
	// MaxSkillSize makes a skill larger in all an error.
	MaxSkillSize int64
	// MaxSourceSize skips the skills past this total of a source.
	MaxSourceSize int64
	// MaxEntries is how many directory entries discovery reads in one
	// source.
	MaxEntries int
	// MaxFetchSize caps the packed bytes one git fetch may download.
	MaxFetchSize int64
}

// Curation is the curator: section: when idle skills become stale and
// archived, and which layers are curated. The root hands it to the
// curator.
type Curation struct {
	StaleAfter   time.Duration
	ArchiveAfter time.Duration
	// MinIdle holds curation back while any copy was used this recently.
	MinIdle time.Duration
	// Layers are the catalog layers curated: workspace, user, marketplace.
	Layers []string
}

// DefaultCuration is 30 days to stale, 90 to archived, 2 hours of quiet,
// every layer.
func DefaultCuration() Curation {
	return Curation{StaleAfter: 720 * time.Hour, ArchiveAfter: 2160 * time.Hour, MinIdle: 2 * time.Hour,
		Layers: []string{"workspace", "user", "marketplace"}}
}

// TargetMode is how a target receives skills: ModeCopy (the default) or
// ModeSymlink.
type TargetMode string

// The target modes of targets[].mode.
const (
	ModeCopy    TargetMode = "copy"
	ModeSymlink TargetMode = "symlink"
)

// Schedule holds the daemon's cron expressions.
type Schedule struct {
	Sync   string
	Curate string
	// Import is when the daemon imports the usage agents recorded
	// themselves (Claude Code's transcripts).
	Import string
	// StatCheckEvery makes every n-th daemon sync (and the first) compare
	// the stat data of every cached and target file with its record; 0
	// never does.
	StatCheckEvery int
}

// Daemon is the daemon: block.
type Daemon struct {
	// Listen is where the daemon serves /metrics, /healthz and /readyz
	// (host:port, or a port alone on the loopback interface); "" serves
	// none unless skillsync daemon --listen asks.
	Listen string
}

// The daemon's default schedules.
const (
	DefaultSyncSchedule   = "@every 15m"
	DefaultCurateSchedule = "0 3 * * *"
	DefaultImportSchedule = "@every 1h"
	// DefaultStatCheckEvery is about daily at the default sync schedule.
	DefaultStatCheckEvery = 96
)

// Target is one entry of targets:.
type Target struct {
	// Dir is absolute.
	Dir  string
	Mode TargetMode
	// Line is where the entry starts in the config file; 0 when it was not
	// read from one.
	Line int
}

// AgentsMDTarget is one entry of targets: with agents_md: FILE.
type AgentsMDTarget struct {
	// Path is absolute, within the workspace.
	Path string
	// Line is where the entry starts in the config file; 0 when it was not
	// read from one.
	Line int
}

// DefaultMaxFileSize is the largest file a skill may hold when the config
// does not say.
const DefaultMaxFileSize = 10 << 20

// Error is a config that does not load. Its message names the file and
// the line of every mistake.
type Error struct {
	File string
	Errs []error
}

func (e *Error) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = inFile(e.File, err.Error())
	}
	return strings.Join(msgs, "\n")
}

// inFile puts file before msg, a message about it: "line N: problem"
// becomes "FILE:N: problem", as compilers write it, and any other
// "FILE: problem".
func inFile(file, msg string) string {
	rest, ok := strings.CutPrefix(msg, "line ")
	switch {
	case ok && !strings.HasPrefix(rest, "0:"):
		return file + ":" + rest
	case ok:
		// No line to give: the value was not read from the file.
		return file + ":" + strings.TrimPrefix(rest, "0:")
	}
	return file + ": " + msg
}

// Default is the configuration used when there is no config file: the
// current directory as the workspace and the built-in skills as the only
// marketplace source.
func Default(kinds *repository.Registry) (*Config, error) {
	return DefaultIn(hostenv.Env{}, kinds)
}

// DefaultIn is Default in env's working directory and environment.
func DefaultIn(env hostenv.Env, kinds *repository.Registry) (*Config, error) {
	wd, err := env.Getwd()
	if err != nil {
		return nil, fmt.Errorf("find the current directory: %w", err)
	}
	builtin, err := defaultSource(wd, kinds)
	if err != nil {
		return nil, &Error{File: "the default config", Errs: []error{err}}
	}
	cfg := &Config{
		Workspace: wd,
		Global:    defaultGlobal(env),
		Sources:   []Source{builtin},
		Limits:    Limits{MaxFileSize: DefaultMaxFileSize},
		Curator:   DefaultCuration(),
		Schedule:  Schedule{Sync: DefaultSyncSchedule, Curate: DefaultCurateSchedule, Import: DefaultImportSchedule, StatCheckEvery: DefaultStatCheckEvery},
	}
	if err := checkWorkspace(cfg.Workspace); err != nil {
		return nil, &Error{File: "the default config", Errs: []error{err}}
	}
	if err := checkWorkspaceRoot(env, cfg.Workspace); err != nil {
		// As a config file there is refused: the cache, the lock and
		// skills/ would land in it.
		return nil, &Error{File: "the default config", Errs: []error{fmt.Errorf("no %s here, and the current folder %s %w: run skillsync in a project's folder, or with -g for the user-wide config", FileName, cfg.Workspace, err)}}
	}
	return cfg, nil
}

// Find loads the config named by explicit, else by $SKILLSYNC_CONFIG, else
// ./skillsync.yaml; with none of them it returns Default. A file named
// explicitly or by the environment must exist.
func Find(explicit string, kinds *repository.Registry) (*Config, error) {
	return FindIn(hostenv.Env{}, explicit, kinds)
}

// FindIn is Find in env's working directory and environment.
func FindIn(env hostenv.Env, explicit string, kinds *repository.Registry) (*Config, error) {
	name := cmp.Or(explicit, env.Getenv("SKILLSYNC_CONFIG"))
	if name != "" {
		return LoadIn(env, name, kinds)
	}
	here, err := env.Abs(FileName)
	if err != nil {
		return nil, fmt.Errorf("find the current directory: %w", err)
	}
	if _, err := os.Lstat(here); err == nil {
		return LoadIn(env, here, kinds)
	}
	cfg, err := DefaultIn(env, kinds)
	if err == nil {
		if above := Above(filepath.Dir(here)); above != "" {
			// A command run in a project's subfolder would start a second
			// workspace here, its own cache, lock and skills/, unannounced:
			// the commands that write refuse on Above, the others warn.
			cfg.Above = above
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("no %s in %s: this is a workspace of its own, with the built-in default; %s is in a folder above: run skillsync in %s, or pass --config %s",
				FileName, filepath.Dir(here), above, filepath.Dir(above), termtext.ShellArg(above)))
		}
	}
	return cfg, err
}

// Above returns the nearest config file in a folder above dir, "" when
// there is none: a workspace in dir would be a second one inside that
// one's.
func Above(dir string) string {
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
		if info, err := os.Stat(filepath.Join(dir, FileName)); err == nil && info.Mode().IsRegular() {
			return filepath.Join(dir, FileName)
		}
	}
}

// defaultEntry is the one source of the built-in default.
const defaultEntry = "embedded: builtin"

// defaultSource decodes defaultEntry as a config entry would be.
func defaultSource(base string, kinds *repository.Registry) (Source, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(defaultEntry), &doc); err != nil {
		return Source{}, err
	}
	var rs rawSource
	if errs := rs.decode(doc.Content[0], "the default source", kinds); len(errs) > 0 {
		return Source{}, errors.Join(errs...)
	}
	return rs.resolve(base, "the default source", kinds)
}

// Load reads and checks the config file at name. Relative paths in it are
// taken from the file's directory; its sources are of the kinds given.
func Load(name string, kinds *repository.Registry) (*Config, error) {
	return LoadIn(hostenv.Env{}, name, kinds)
}

// LoadIn is Load in env's working directory and environment: a relative
// name, "~" in the workspace, global and targets, and the default global
// folder are taken from them.
func LoadIn(env hostenv.Env, name string, kinds *repository.Registry) (*Config, error) {
	abs, err := env.Abs(name)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	data, info, err := readFile(abs)
	if err != nil {
		return nil, &Error{File: abs, Errs: []error{err}}
	}
	cfg, err := parse(env, abs, data, kinds)
	if err != nil {
		return nil, err
	}
	cfg.FileInfo = info
	return cfg, nil
}

// parse checks data as the config file at abs, an absolute path.
func parse(env hostenv.Env, abs string, data []byte, kinds *repository.Registry) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: abs, Errs: []error{syntaxError(data, err)}}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: abs, Errs: []error{errors.New("the file is empty; run skillsync init --force to write a starter config, or delete it to use the built-in default")}}
	}
	raw := rawConfig{kinds: kinds}
	lines, errs := decodeMappingLines(doc.Content[0], "the config", raw.fields())
	if len(errs) > 0 {
		return nil, &Error{File: abs, Errs: errs}
	}
	raw.lines = lines
	cfg, errs := raw.resolve(env, filepath.Dir(abs))
	if len(errs) > 0 {
		return nil, &Error{File: abs, Errs: errs}
	}
	cfg.File = abs
	for i, w := range cfg.Warnings {
		// Printed where the config is used, maybe far from it: a user
		// config, the global one or a --config.
		cfg.Warnings[i] = inFile(abs, w)
	}
	return cfg, nil
}

// maxConfigSize bounds the config file: it is written by people.
const maxConfigSize = 1 << 20

// readFile reads a regular config file of sane size, and returns its
// stat data as the file was opened: taken before the read, so that an
// edit landing during or after it makes the file differ from what is
// returned, never the other way round.
func readFile(name string) ([]byte, os.FileInfo, error) {
	// Checked before the open too: opening a FIFO blocks until a writer
	// comes.
	info, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		// Only a config named (--config, $SKILLSYNC_CONFIG) is looked
		// for: a ./skillsync.yaml missing is the built-in default.
		return nil, nil, fmt.Errorf("read config: %w: write one there with skillsync init, or name the right file with --config (or $SKILLSYNC_CONFIG)", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	if err := checkFile(info); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	if err := checkFile(info); err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	if len(data) > maxConfigSize {
		return nil, nil, fmt.Errorf("the config is more than the %d bytes a config may have", maxConfigSize)
	}
	return data, info, nil
}

// checkFile refuses a config that is not a regular file of sane size.
func checkFile(info os.FileInfo) error {
	if info.IsDir() {
		return fmt.Errorf("the config is not a regular file but a directory: name the config file itself (--config DIR/skillsync.yaml), or move the directory away and run skillsync init")
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("the config is not a regular file (%s): make it a file, or move it away and run skillsync init", info.Mode().Type())
	}
	if info.Size() > maxConfigSize {
		return fmt.Errorf("the config is %d bytes, more than the %d a config may have", info.Size(), maxConfigSize)
	}
	return nil
}

// absPath expands ~ and makes p absolute from base; "" gives def.
func absPath(env hostenv.Env, base, p, def string) string {
	if p == "" {
		return def
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := env.HomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// defaultGlobal is $XDG_CONFIG_HOME/skillsync/skills.
func defaultGlobal(env hostenv.Env) string {
	dir, err := env.ConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "skillsync", "skills")
}

// checkWorkspace refuses a workspace that exists and is not a directory:
// every path skillsync writes is below it.
func checkWorkspace(dir string) error {
	info, err := os.Stat(dir)
	if err == nil && !info.IsDir() {
		return fmt.Errorf("workspace %s is not a directory", dir)
	}
	return nil
}

// AllowsApprover reports whether who may approve a promotion: a name is
// needed, and it must be in Approvers when that is set.
func (p Promotion) AllowsApprover(who string) bool {
	if strings.TrimSpace(who) == "" {
		return false
	}
	return len(p.Approvers) == 0 || slices.Contains(p.Approvers, who)
}

// AllowedTargets returns where drafts may go: Targets, or the workspace
// and user layers when it is empty.
func (p Promotion) AllowedTargets() []string {
	if len(p.Targets) == 0 {
		return []string{PromoteWorkspace, PromoteUser}
	}
	return p.Targets
}

// AllowsTarget reports whether a draft may go to target.
func (p Promotion) AllowsTarget(target string) bool {
	return slices.Contains(p.AllowedTargets(), target)
}
