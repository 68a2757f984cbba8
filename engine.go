// Package skillsync syncs Agent Skills from git repositories and local
// directories into the places agents read them.
//
// A program that embeds skillsync loads a Config, makes an Engine and
// calls its methods; it never needs the command-line tool.
package skillsync

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Engine wires the sources of a Config into a catalog.
type Engine struct {
	cfg       *Config
	embedded  map[string]fs.FS
	gitStore  string
	progress  func(source string) io.Writer
	actorName string
	clock     func() time.Time
	warn      func(string)
}

// WithActor names who makes the changes in the audit log ("daemon").
func WithActor(actor string) Option {
	return func(e *Engine) { e.actorName = actor }
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

func (e *Engine) now() time.Time {
	if e.clock != nil {
		return e.clock().UTC().Truncate(time.Second)
	}
	return time.Now().UTC().Truncate(time.Second)
}

func (e *Engine) warnf(format string, args ...any) {
	if e.warn != nil {
		e.warn(fmt.Sprintf(format, args...))
	}
}

// Option configures an Engine.
type Option func(*Engine)

// WithEmbedded makes fsys available to the config as embedded: name, so a
// program can ship skills of its own.
func WithEmbedded(name string, fsys fs.FS) Option {
	return func(e *Engine) { e.embedded[name] = fsys }
}

// WithGitStore keeps the bare git stores under dir instead of
// $XDG_CACHE_HOME/skillsync/git.
func WithGitStore(dir string) Option {
	return func(e *Engine) { e.gitStore = dir }
}

// WithProgress sends each git source's fetch progress to the writer
// progress returns for it.
func WithProgress(progress func(source string) io.Writer) Option {
	return func(e *Engine) { e.progress = progress }
}

// NewEngine returns an Engine for cfg. The built-in skills are available
// as embedded: builtin.
func NewEngine(cfg *Config, opts ...Option) *Engine {
	e := &Engine{cfg: cfg, embedded: map[string]fs.FS{"builtin": Builtin()}}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Config returns the engine's config.
func (e *Engine) Config() *Config { return e.cfg }

func (e *Engine) options() repository.Options {
	return repository.Options{Strict: e.cfg.Strict, MaxFileSize: e.cfg.MaxFileSize}
}

// Repositories returns the marketplace sources in config order.
func (e *Engine) Repositories() ([]repository.Repository, error) {
	repos := make([]repository.Repository, 0, len(e.cfg.Repositories))
	for _, rc := range e.cfg.Repositories {
		switch rc.Type() {
		case "embedded":
			fsys, ok := e.embedded[rc.Embedded]
			if !ok {
				return nil, fmt.Errorf("source %s: no embedded file system named %q (this program has: %s)", rc.Name, rc.Embedded, e.embeddedNames())
			}
			repos = append(repos, repository.NewEmbedded(rc.Name, fsys, e.options()))
		case "git":
			repos = append(repos, e.newGit(rc))
		default:
			repos = append(repos, repository.NewLocal(rc.Name, rc.Dir, e.options()))
		}
	}
	return repos, nil
}

func (e *Engine) newGit(rc RepositoryConfig) *repository.Git {
	var progress io.Writer
	if e.progress != nil {
		progress = e.progress(rc.Name)
	}
	a := rc.Auth
	return repository.NewGit(repository.GitConfig{
		Source: rc.Name, URL: rc.Git, Ref: rc.Ref, Path: rc.Path, Depth: rc.Depth, Timeout: rc.Timeout,
		StoreRoot: e.gitStore, Progress: progress,
		Auth: repository.GitAuth{
			Username: a.Username, PasswordEnv: a.PasswordEnv, PasswordFile: a.PasswordFile,
			SSHKeyFile: a.SSHKeyFile, SSHKeyPassphraseEnv: a.SSHKeyPassphraseEnv, KnownHostsFile: a.KnownHostsFile,
		},
	}, e.options())
}

func (e *Engine) embeddedNames() string {
	names := make([]string, 0, len(e.embedded))
	for n := range e.embedded {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// localLayer is one of the layers read in place from a directory.
type localLayer struct {
	layer  layering.Layer
	source string
	dir    string
}

// localLayers returns the global, workspace and user layers that apply.
func (e *Engine) localLayers() []localLayer {
	var out []localLayer
	if e.cfg.Global != "" {
		out = append(out, localLayer{layering.Global, "global", e.cfg.Global})
	}
	out = append(out, localLayer{layering.Workspace, "workspace", filepath.Join(e.cfg.Workspace, "skills")})
	if e.cfg.User != "" {
		out = append(out, localLayer{layering.User, "user", filepath.Join(e.cfg.Workspace, e.cfg.User, "skills")})
	}
	return out
}

// Catalog reads every source and merges them. A source that cannot be
// read becomes a problem in the catalog; the others still count. A
// marketplace skill that is in the cache is located there.
func (e *Engine) Catalog(ctx context.Context) (*layering.Catalog, error) {
	m, err := materialize.ReadManifest(e.CacheDir())
	if err != nil {
		m = materialize.NewManifest() // the catalog still works from the sources
	}
	return e.catalogWith(ctx, m)
}

func (e *Engine) catalogWith(ctx context.Context, m *materialize.Manifest) (*layering.Catalog, error) {
	cat, err := e.buildCatalog(ctx, m)
	if err != nil {
		return nil, err
	}
	e.applyUsage(ctx, cat)
	return cat, nil
}

// buildCatalog merges the sources without reading usage.
func (e *Engine) buildCatalog(ctx context.Context, m *materialize.Manifest) (*layering.Catalog, error) {
	repos, err := e.Repositories()
	if err != nil {
		return nil, err
	}
	var inputs []layering.Input
	var problems []skill.Problem
	read := func(layer layering.Layer, r repository.Repository, dir func(skill.Skill) string) {
		skills, ps, err := r.Skills(ctx)
		problems = append(problems, ps...)
		if err != nil {
			problems = append(problems, sourceProblem(r.Source(), err))
			return
		}
		in := layering.Input{Layer: layer, Source: r.Source(), Skills: skills, Dir: dir}
		if g, ok := r.(*repository.Git); ok {
			rev, _ := g.Current(ctx)
			in.Revision = string(rev)
		}
		if layer == layering.Marketplace {
			in.Dir = e.cachedDir(m, in.Source, in.Revision, dir)
		}
		inputs = append(inputs, in)
	}
	for _, r := range repos {
		var dir func(skill.Skill) string
		if l, ok := r.(*repository.Local); ok {
			dir = localDir(l.Dir())
		}
		read(layering.Marketplace, r, dir)
	}
	for _, l := range e.localLayers() {
		read(l.layer, repository.NewLocal(l.source, l.dir, e.options()), localDir(l.dir))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cat := layering.Build(inputs, layering.Options{Hidden: e.cfg.Hidden})
	cat.Problems = append(problems, cat.Problems...)
	return cat, nil
}

// applyUsage marks each winner with its curation state and records the
// first sighting of new names. The usage file is a side input: when it
// cannot be read or written the catalog is still whole.
func (e *Engine) applyUsage(ctx context.Context, cat *layering.Catalog) {
	store := e.Usage()
	store.Resolve = e.resolverFrom(cat)
	u, err := store.Load()
	if err != nil {
		e.warnf("%v", err)
		if !curator.IsCorrupt(err) {
			return
		}
	}
	copies := make([]curator.Copy, 0, len(cat.Winners))
	for _, w := range cat.Winners {
		if c, ok := e.copyOf(&w.Entry); ok {
			w.State = string(u.StateOf(c))
			copies = append(copies, c)
		}
	}
	if err := store.Seen(ctx, copies, e.now()); err != nil {
		e.warnf("record first sighting: %v", err)
	}
}

// cachedDir locates a marketplace skill in the cache when the cache holds
// it (for git, at the revision the store has), else as fallback does.
func (e *Engine) cachedDir(m *materialize.Manifest, source, revision string, fallback func(skill.Skill) string) func(skill.Skill) string {
	rec, ok := m.Sources[source]
	if !ok || (revision != "" && rec.Revision != revision) {
		return fallback
	}
	root := filepath.Join(e.CacheDir(), source)
	return func(s skill.Skill) string {
		if _, ok := rec.Skills[s.Name]; ok {
			return filepath.Join(root, s.Name)
		}
		if fallback != nil {
			return fallback(s)
		}
		return ""
	}
}

func localDir(root string) func(skill.Skill) string {
	return func(s skill.Skill) string { return filepath.Join(root, filepath.FromSlash(s.Path)) }
}

func sourceProblem(source string, err error) skill.Problem {
	return skill.Problem{Level: skill.Error, Rule: "source-unreadable", Source: source, Message: err.Error()}
}
