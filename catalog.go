package skillsync

import (
	"context"
	"io/fs"

	"github.com/skillsync/skillsync/catalog"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// view is the workspace as package catalog builds its catalog from it.
func (e *Engine) view() *catalog.Workspace {
	return &catalog.Workspace{CacheDir: e.layout.CacheDir(), SkillsDir: e.layout.SkillsDir(), Sources: sourceNames(e.cfg.Sources),
		Layers: catalog.Layers(e.cfg.Global, e.layout.SkillsDir(), e.layout.UserSkillsDir()), Options: e.options(),
		Hidden: e.cfg.Hidden, User: e.cfg.User, Warn: e.warn,
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
	w, err := e.find(cat, name, true)
	return w, cat, err
}

// find looks name up in cat; a hidden skill is a *HiddenError unless
// withHidden.
func (e *Engine) find(cat *layering.Catalog, name string, withHidden bool) (*layering.Winner, error) {
	w, ok := cat.Lookup(name)
	if !ok {
		return nil, &UnknownSkillError{Name: name, Near: layering.Nearest(cat.Winners, name, 3)}
	}
	if w.Hidden && !withHidden {
		return nil, &HiddenError{Name: w.Skill.Name, File: e.cfg.File}
	}
	return w, nil
}

// Read opens file of the catalog skill name: its SKILL.md when file is
// "". file is relative to the skill's directory and must stay inside it:
// "..", absolute paths and symbolic links that lead out of the skill are
// refused. A hidden skill is a *HiddenError. The caller closes the file.
func (e *Engine) Read(ctx context.Context, name, file string) (fs.File, *layering.Winner, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	w, err := e.find(cat, name, false)
	if err != nil {
		return nil, nil, err
	}
	if file == "" {
		file = w.Skill.File
	}
	f, err := repository.OpenSkillFile(w.Skill.Name, file, w.Dir, w.Skill.Files)
	return f, w, err
}

// Stamp returns a value that changes whenever the catalog may have
// changed (catalog.Workspace.Stamp). A server re-reads the catalog when
// the stamp moves.
func (e *Engine) Stamp() (string, error) { return e.view().Stamp(), nil }

// WatchDirs returns the directories whose entries change when the catalog
// does (catalog.Workspace.WatchDirs). A server watches them to hear of a
// change when it happens.
func (e *Engine) WatchDirs() []string { return e.view().WatchDirs() }
