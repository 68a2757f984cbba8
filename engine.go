// Package skillsync syncs Agent Skills from git repositories, file systems
// compiled into a program and local directories into the places agents
// read them.
//
// A program that embeds skillsync loads a config (package config), makes
// an Engine and calls its methods: Sync writes the workspace, Catalog and
// Read show what it holds, Use records what agents use, Curate retires
// what nobody uses. It never needs the command-line tool.
package skillsync

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"fmt"
	"io"
	"io/fs"
	"os/user"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/workspace"
)

// Engine runs skillsync's jobs on one workspace as its config describes.
// Its methods are safe to call from several goroutines; syncs on one
// workspace serialize on the cache's file lock.
type Engine struct {
	cfg      *config.Config
	layout   workspace.Layout
	kinds    *repository.Registry
	embedded map[string]fs.FS
	gitStore string
	env      hostenv.Env
	progress func(source string) io.Writer
	actor    string
	clock    func() time.Time
	warn     func(string)
	version  string
}

// Option configures an Engine.
type Option func(*Engine)

// WithEmbedded makes fsys available as embedded: name (load the config
// with Kinds(name)), so a program can ship skills of its own.
func WithEmbedded(name string, fsys fs.FS) Option {
	return func(e *Engine) { e.embedded[name] = fsys }
}

// WithGitStore keeps the bare git stores under dir instead of
// $XDG_CACHE_HOME/skillsync/git.
func WithGitStore(dir string) Option {
	return func(e *Engine) { e.gitStore = dir }
}

// WithHost runs the engine as if in the working directory dir with
// environ (KEY=VALUE pairs) as its whole environment: the home directory,
// the XDG folders, credentials named by variable and the agents' folders
// are taken from them instead of the process's. The command line passes
// what it was started with; tests pass their own, to run side by side.
func WithHost(dir string, environ []string) Option {
	return func(e *Engine) { e.env = hostenv.New(dir, environ) }
}

// WithProgress sends each git source's fetch progress to the writer
// progress returns for it.
func WithProgress(progress func(source string) io.Writer) Option {
	return func(e *Engine) { e.progress = progress }
}

// WithActor names who makes the changes in the audit log ("daemon"); the
// default is the user running the program.
func WithActor(actor string) Option {
	return func(e *Engine) { e.actor = actor }
}

// WithClock makes the engine read the time from now, for tests.
func WithClock(now func() time.Time) Option {
	return func(e *Engine) { e.clock = now }
}

// WithWarnings sends warnings that change nothing (a corrupt usage file
// set aside) to warn.
func WithWarnings(warn func(string)) Option {
	return func(e *Engine) { e.warn = warn }
}

// NewEngine returns an Engine for cfg, with embedded: builtin available.
func NewEngine(cfg *config.Config, opts ...Option) *Engine {
	e := &Engine{cfg: cfg, layout: cfg.Layout(), kinds: Kinds(), embedded: map[string]fs.FS{"builtin": Builtin()}}
	for _, o := range opts {
		o(e)
	}
	if e.actor == "" {
		e.actor = "user"
		if u, err := user.Current(); err == nil {
			e.actor = "user:" + u.Username
		}
	}
	return e
}

// Config returns the engine's config.
func (e *Engine) Config() *config.Config { return e.cfg }

// Layout returns the workspace's on-disk layout.
func (e *Engine) Layout() workspace.Layout { return e.layout }

// Audit returns the workspace's audit log.
func (e *Engine) Audit() *curator.Audit { return curator.NewAudit(e.layout.SkillsDir()) }

func (e *Engine) now() time.Time {
	now := time.Now
	if e.clock != nil {
		now = e.clock
	}
	return now().UTC().Truncate(time.Second)
}

func (e *Engine) warnf(format string, args ...any) {
	if e.warn != nil {
		e.warn(fmt.Sprintf(format, args...))
	}
}
