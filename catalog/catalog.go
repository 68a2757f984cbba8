// Package catalog builds the catalog as a workspace holds it: the
// marketplace layer from the cache's records (what the last sync wrote,
// the files agents read), the global, workspace and user layers read in
// place, staged rollout held back, and each winner marked with its
// curation state. It names the copy each entry's usage is kept under. It
// reads no git store and writes nothing.
package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// Layer is one of the layers read in place from a directory.
type Layer struct {
	Layer  layering.Layer
	Source string
	Dir    string
}

// Workspace is what a workspace's catalog is built from, as its config
// sets it.
type Workspace struct {
	// CacheDir is the cache (.skills-cache); SkillsDir the workspace's
	// skills folder, which holds the usage file.
	CacheDir, SkillsDir string
	// Sources are the marketplace sources, in config order.
	Sources []string
	// Layers are the global, workspace and user layers that apply.
	Layers []Layer
	// Options are the discovery settings the local layers are read with.
	Options repository.Options
	// Hidden are the names the config hides; ConfigFile is the config,
	// for messages.
	Hidden     []string
	ConfigFile string
	// User owns the user layer's copies.
	User string
	// Host returns this host's id and environment, for staged rollout.
	Host func() (host, env string)
	// Warn receives what changes nothing (a usage file set aside); nil
	// drops it.
	Warn func(string)
}

// Layers returns the global (when dir is set), workspace and user (when
// userDir is set) layers.
func Layers(global, workspaceDir, userDir string) []Layer {
	var out []Layer
	if global != "" {
		out = append(out, Layer{layering.Global, "global", global})
	}
	out = append(out, Layer{layering.Workspace, "workspace", workspaceDir})
	if userDir != "" {
		out = append(out, Layer{layering.User, "user", userDir})
	}
	return out
}

func (w *Workspace) warn(err error) {
	if w.Warn != nil {
		w.Warn(err.Error())
	}
}

// Read merges the four layers as the workspace holds them. A configured
// source the cache does not hold is a problem ("not synced yet"); the
// other layers still count.
func (w *Workspace) Read(ctx context.Context) (*layering.Catalog, error) {
	return w.read(ctx, true)
}

// read is Read; without states the winners carry no curation state and
// the usage file is not read: a use or a pin finds its skill by name, and
// then reads the usage under its lock to change it.
func (w *Workspace) read(ctx context.Context, states bool) (*layering.Catalog, error) {
	m, err := materialize.ReadSkills(w.CacheDir)
	var problems []skill.Problem
	if err != nil {
		problems = append(problems, skill.Problem{Level: skill.Error, Rule: "cache-unreadable", Message: err.Error() + "; run skillsync sync"})
		m = materialize.NewManifest()
	}
	var cat *layering.Catalog
	if states {
		cat, err = w.From(ctx, m, nil)
	} else {
		cat, err = w.Build(ctx, m)
	}
	if err != nil {
		return nil, err
	}
	cat.Problems = append(problems, cat.Problems...)
	return cat, nil
}

// From merges the layers with the marketplace layer as m records it, and
// marks each winner with its curation state: from u when the caller has
// the usage at hand (a sync loaded it already, and decoding it again
// costs as much as the rest of a sync with nothing new), else from the
// usage file.
func (w *Workspace) From(ctx context.Context, m *materialize.Manifest, u *curator.Usage) (*layering.Catalog, error) {
	cat, err := w.Build(ctx, m)
	if err != nil {
		return nil, err
	}
	known := true
	if u == nil {
		// The usage file is a side input: when it cannot be read the
		// catalog is still whole.
		var err error
		if u, err = w.Store(cat).Load(); err != nil {
			w.warn(err)
			known = false
			if !curator.IsCorrupt(err) {
				notCached(cat, known)
				return cat, nil
			}
		}
	}
	for _, win := range cat.Winners {
		if c, ok := w.CopyOf(&win.Entry); ok {
			win.State = string(u.StateOf(c))
		}
	}
	notCached(cat, known)
	return cat, nil
}

// notCached gives the marketplace winners of cat that the cache holds no
// files of (archived out of it) their state: unsynced when the curator
// no longer holds them archived (known: the usage was read), restored and
// waiting for a sync to bring them back; archived, as the cache left them,
// when the usage could not be read.
func notCached(cat *layering.Catalog, known bool) {
	for _, win := range cat.Winners {
		if win.Layer != layering.Marketplace || win.Skill.Files != nil || win.State == layering.Archived {
			continue
		}
		win.State = layering.Archived
		if known {
			win.State = layering.Unsynced
		}
	}
}

// Build merges the layers without reading usage.
func (w *Workspace) Build(ctx context.Context, m *materialize.Manifest) (*layering.Catalog, error) {
	var inputs []layering.Input
	var problems []skill.Problem
	for _, s := range w.Sources {
		in, ps := w.cached(m, s)
		problems = append(problems, ps...)
		if in != nil {
			inputs = append(inputs, *in)
		}
	}
	for _, l := range w.Layers {
		skills, ps, err := dirsource.NewLocal(l.Source, l.Dir, w.Options).Skills(ctx)
		problems = append(problems, ps...)
		if err != nil {
			problems = append(problems, sourceProblem(l.Source, err))
			continue
		}
		root := l.Dir
		inputs = append(inputs, layering.Input{Layer: l.Layer, Source: l.Source, Skills: skills,
			Dir: func(s skill.Skill) string { return filepath.Join(root, filepath.FromSlash(s.Path)) }})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	held := fleet.HoldBack(inputs, w.Host)
	cat := layering.Build(inputs, layering.Options{Hidden: w.Hidden})
	cat.Problems = append(problems, cat.Problems...)
	cat.Held = held
	return cat, nil
}

// ruleNotSynced is the rule of the problem a configured source the cache
// does not hold yet makes.
const ruleNotSynced = "not-synced"

// cached reads one marketplace source's skills from the cache
// (materialize.CachedSkills): the ones its manifest record names, each in
// its own cache directory.
func (w *Workspace) cached(m *materialize.Manifest, source string) (*layering.Input, []skill.Problem) {
	rec, ok := m.Sources[source]
	if !ok {
		return nil, []skill.Problem{{Level: skill.Warning, Rule: ruleNotSynced, Source: source,
			Message: fmt.Sprintf("source %s is not synced yet: run skillsync sync", source)}}
	}
	root := filepath.Join(w.CacheDir, source)
	in := &layering.Input{Layer: layering.Marketplace, Source: source, Revision: rec.Revision,
		Dir: func(s skill.Skill) string { return filepath.Join(root, s.Name) }}
	skills, problems, err := materialize.CachedSkills(root, source, rec)
	if err != nil {
		return nil, []skill.Problem{sourceProblem(source, fmt.Errorf("the cache of source %s is unreadable (%w); run skillsync sync", source, err))}
	}
	in.Skills = skills
	return in, problems
}

func sourceProblem(source string, err error) skill.Problem {
	return skill.Problem{Level: skill.Error, Rule: "source-unreadable", Source: source, Message: err.Error()}
}

// CopyOf names the copy an entry is (the package function CopyOf).
func (w *Workspace) CopyOf(en *layering.Entry) (curator.Copy, bool) { return CopyOf(en, w.User) }

// CopyOf names the copy an entry is: its layer, its source (marketplace)
// or user (user layer), and its name. ok is false for a name the curator
// cannot key, which then has no usage.
func CopyOf(en *layering.Entry, user string) (curator.Copy, bool) {
	owner := ""
	switch en.Layer {
	case layering.Marketplace:
		owner = en.Source
	case layering.User:
		owner = user
	}
	c, err := curator.NewCopy(en.Layer, owner, en.Skill.Name)
	return c, err == nil
}

// ResolverFrom maps a bare name of a version-1 usage file to the copy
// that wins it in cat.
func (w *Workspace) ResolverFrom(cat *layering.Catalog) func(string) (curator.Copy, bool) {
	return func(name string) (curator.Copy, bool) {
		win, ok := cat.Lookup(name)
		if !ok {
			return curator.Copy{}, false
		}
		return w.CopyOf(&win.Entry)
	}
}

// Store returns the workspace's usage store, a version-1 usage file
// migrated to the copies that win in cat.
func (w *Workspace) Store(cat *layering.Catalog) *curator.Store {
	s := w.Usage()
	s.Resolve = w.ResolverFrom(cat)
	return s
}

// Usage returns the workspace's usage store. A version-1 usage file is
// migrated to the copies that win now, from a catalog built once and only
// when such a file is met, without reading usage.
func (w *Workspace) Usage() *curator.Store {
	s := curator.NewStore(w.SkillsDir)
	if w.Warn != nil {
		s.Warn = w.Warn
	}
	var once sync.Once
	resolve := func(string) (curator.Copy, bool) { return curator.Copy{}, false }
	s.Resolve = func(name string) (curator.Copy, bool) {
		once.Do(func() {
			m, err := materialize.ReadSkills(w.CacheDir)
			if err != nil {
				m = materialize.NewManifest()
			}
			if cat, err := w.Build(context.Background(), m); err == nil {
				resolve = w.ResolverFrom(cat)
			}
		})
		return resolve(name)
	}
	return s
}

// LayerDirs returns the local layers whose skills curation moves into
// their .archive/: the workspace's and the user's.
func (w *Workspace) LayerDirs() []curator.LayerDir {
	var out []curator.LayerDir
	for _, l := range w.Layers {
		switch l.Layer {
		case layering.Workspace:
			out = append(out, curator.LayerDir{Layer: l.Layer, Dir: l.Dir})
		case layering.User:
			out = append(out, curator.LayerDir{Layer: l.Layer, Owner: w.User, Dir: l.Dir})
		}
	}
	return out
}

// WatchDirs returns the directories whose entries change when the
// catalog does: the cache, where a sync replaces the manifest, and each
// layer read in place, where promotion adds a skill and curation archives
// one.
func (w *Workspace) WatchDirs() []string {
	dirs := []string{w.CacheDir}
	for _, l := range w.Layers {
		dirs = append(dirs, l.Dir)
	}
	return dirs
}

// Stamp returns a value that changes whenever the catalog may have
// changed: a sync rewrote the cache's manifest, or a skill changed in a
// layer read in place, at any depth discovery looks (workspace.Stamp).
func (w *Workspace) Stamp() string {
	manifest := filepath.Join(w.CacheDir, materialize.ManifestName)
	return workspace.Stamp([]string{manifest}, w.WatchDirs()[1:], repository.MaxDepth+2)
}
