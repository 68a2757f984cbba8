package skillsync

import (
	"context"
	"io/fs"

	"github.com/skillsync/skillsync/catalog"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
)

// view is the workspace as package catalog builds its catalog from it.
func (e *Engine) view() *catalog.Workspace {
	return &catalog.Workspace{CacheDir: e.layout.CacheDir(), SkillsDir: e.layout.SkillsDir(), Sources: sourceNames(e.cfg.Sources),
		Layers: catalog.Layers(e.cfg.Global, e.layout.SkillsDir(), e.layout.UserSkillsDir()), Options: e.options(),
		Hidden: e.cfg.Hidden, ConfigFile: e.cfg.File, User: e.cfg.User, Warn: e.warn,
		Host: func() (string, string) { return e.HostID(), e.Environment() }}
}

// Catalog merges the four layers as the workspace holds them: the
// marketplace layer from the cache (what the last sync wrote, the files
// agents read), the global, workspace and user layers in place. It reads
// no git store and writes nothing (catalog.Workspace.Read).
func (e *Engine) Catalog(ctx context.Context) (*layering.Catalog, error) { return e.view().Read(ctx) }

// catalogFrom is the catalog with the marketplace layer as m records it,
// states from u when not nil (catalog.Workspace.From).
func (e *Engine) catalogFrom(ctx context.Context, m *materialize.Manifest, u *curator.Usage) (*layering.Catalog, error) {
	return e.view().From(ctx, m, u)
}

// Lookup finds a catalog skill by name, case-insensitively, or says which
// names come close (*UnknownSkillError). Hidden skills are found, marked
// Hidden, for show; Read and Use refuse them.
func (e *Engine) Lookup(ctx context.Context, name string) (*layering.Winner, *layering.Catalog, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	w, err := e.view().Find(cat, name, true)
	return w, cat, err
}

// Read opens file of the catalog skill name, its SKILL.md when file is ""
// (catalog.Workspace.Open): file must stay inside the skill's directory.
// A hidden skill is a *HiddenError. The caller closes the file.
func (e *Engine) Read(ctx context.Context, name, file string) (fs.File, *layering.Winner, error) {
	return e.view().Open(ctx, name, file)
}

// Stamp returns a value that changes whenever the catalog may have
// changed (catalog.Workspace.Stamp). A server re-reads the catalog when
// the stamp moves.
func (e *Engine) Stamp() (string, error) { return e.view().Stamp(), nil }

// WatchDirs returns the directories whose entries change when the catalog
// does (catalog.Workspace.WatchDirs). A server watches them to hear of a
// change when it happens.
func (e *Engine) WatchDirs() []string { return e.view().WatchDirs() }
