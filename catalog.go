package skillsync

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/skill"
)

// Catalog merges the four layers as the workspace holds them: the
// marketplace layer from the cache (what the last sync wrote, the files
// agents read), the global, workspace and user layers in place. It reads
// no git store and writes nothing. A configured source the cache does not
// hold is a problem ("not synced yet"); the other layers still count.
func (e *Engine) Catalog(ctx context.Context) (*layering.Catalog, error) {
	m, err := materialize.ReadSkills(e.layout.CacheDir())
	var problems []skill.Problem
	if err != nil {
		problems = append(problems, skill.Problem{Level: skill.Error, Rule: "cache-unreadable", Message: err.Error() + "; run skillsync sync"})
		m = materialize.NewManifest()
	}
	cat, err := e.catalogFrom(ctx, m, nil)
	if err != nil {
		return nil, err
	}
	cat.Problems = append(problems, cat.Problems...)
	return cat, nil
}

// catalogFrom merges the layers with the marketplace layer as m records
// it, and marks each winner with its curation state: from u when the
// caller has the usage at hand (a sync loaded it already, and decoding it
// again costs as much as the rest of a sync with nothing new), else from
// the usage file.
func (e *Engine) catalogFrom(ctx context.Context, m *materialize.Manifest, u *curator.Usage) (*layering.Catalog, error) {
	cat, err := e.buildCatalog(ctx, m)
	if err != nil {
		return nil, err
	}
	if u != nil {
		e.markStates(cat, u)
	} else {
		e.applyUsage(cat)
	}
	return cat, nil
}

// buildCatalog merges the layers without reading usage.
func (e *Engine) buildCatalog(ctx context.Context, m *materialize.Manifest) (*layering.Catalog, error) {
	var inputs []layering.Input
	var problems []skill.Problem
	for _, s := range e.cfg.Sources {
		in, ps := e.cachedInput(ctx, m, s.Name)
		problems = append(problems, ps...)
		if in != nil {
			inputs = append(inputs, *in)
		}
	}
	for _, l := range e.localLayers() {
		skills, ps, err := dirsource.NewLocal(l.source, l.dir, e.options()).Skills(ctx)
		problems = append(problems, ps...)
		if err != nil {
			problems = append(problems, sourceProblem(l.source, err))
			continue
		}
		inputs = append(inputs, layering.Input{Layer: l.layer, Source: l.source, Skills: skills, Dir: localDir(l.dir)})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	held := fleet.HoldBack(inputs, func() (string, string) { return e.HostID(), e.Environment() })
	cat := layering.Build(inputs, layering.Options{Hidden: e.cfg.Hidden})
	cat.Problems = append(problems, cat.Problems...)
	cat.Held = held
	return cat, nil
}

// cachedInput reads one marketplace source's skills from the cache
// (materialize.CachedSkills): the ones its manifest record names, each in
// its own cache directory.
func (e *Engine) cachedInput(ctx context.Context, m *materialize.Manifest, source string) (*layering.Input, []skill.Problem) {
	rec, ok := m.Sources[source]
	if !ok {
		return nil, []skill.Problem{{Level: skill.Warning, Rule: "not-synced", Source: source,
			Message: fmt.Sprintf("source %s is not synced yet: run skillsync sync", source)}}
	}
	root := filepath.Join(e.layout.CacheDir(), source)
	in := &layering.Input{Layer: layering.Marketplace, Source: source, Revision: rec.Revision,
		Dir: func(s skill.Skill) string { return filepath.Join(root, s.Name) }}
	skills, problems, err := materialize.CachedSkills(root, source, rec)
	if err != nil {
		return nil, []skill.Problem{sourceProblem(source, fmt.Errorf("the cache of source %s is unreadable (%w); run skillsync sync", source, err))}
	}
	in.Skills = skills
	return in, problems
}

// applyUsage marks each winner with its curation state. The usage file is
// a side input: when it cannot be read the catalog is still whole.
func (e *Engine) applyUsage(cat *layering.Catalog) {
	store := e.Usage()
	store.Resolve = e.resolverFrom(cat)
	u, err := store.Load()
	if err != nil {
		e.warnf("%v", err)
		if !curator.IsCorrupt(err) {
			return
		}
	}
	e.markStates(cat, u)
}

// markStates marks each winner of cat with its curation state in u.
func (e *Engine) markStates(cat *layering.Catalog, u *curator.Usage) {
	for _, w := range cat.Winners {
		if c, ok := e.copyOf(&w.Entry); ok {
			w.State = string(u.StateOf(c))
		}
	}
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
	out = append(out, localLayer{layering.Workspace, "workspace", e.layout.SkillsDir()})
	if dir := e.layout.UserSkillsDir(); dir != "" {
		out = append(out, localLayer{layering.User, "user", dir})
	}
	return out
}

func localDir(root string) func(skill.Skill) string {
	return func(s skill.Skill) string { return filepath.Join(root, filepath.FromSlash(s.Path)) }
}

func sourceProblem(source string, err error) skill.Problem {
	return skill.Problem{Level: skill.Error, Rule: "source-unreadable", Source: source, Message: err.Error()}
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
