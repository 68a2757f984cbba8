package skillsync

import (
	"context"
	"fmt"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
)

// SkillsDir is the workspace layer's directory, which also holds the
// usage file, the audit log and the archive.
func (e *Engine) SkillsDir() string { return filepath.Join(e.cfg.Workspace, "skills") }

// Usage returns the workspace's usage store. A version-1 usage file is
// migrated to the copies that win now.
func (e *Engine) Usage() *curator.Store {
	s := curator.NewStore(e.SkillsDir())
	if e.warn != nil {
		s.Warn = e.warn
	}
	s.Resolve = e.lazyResolver()
	return s
}

// Audit returns the workspace's audit log.
func (e *Engine) Audit() *curator.Audit { return curator.NewAudit(e.SkillsDir()) }

// actor names who made a change, for the audit log.
func (e *Engine) actor() string {
	if e.actorName != "" {
		return e.actorName
	}
	if u, err := user.Current(); err == nil {
		return "user:" + u.Username
	}
	return "user"
}

// UnknownSkillError is a name the catalog does not have.
type UnknownSkillError struct {
	Name string
	Near []string
}

func (e *UnknownSkillError) Error() string {
	msg := fmt.Sprintf("no skill named %q", e.Name)
	if len(e.Near) > 0 {
		return msg + "; did you mean " + strings.Join(e.Near, ", ") + "?"
	}
	return msg + "; run skillsync list to see them all"
}

// Lookup finds a catalog skill by name, case-insensitively, or says which
// names come close.
func (e *Engine) Lookup(ctx context.Context, name string) (*layering.Winner, *layering.Catalog, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	if w, ok := cat.Lookup(name); ok {
		return w, cat, nil
	}
	return nil, cat, &UnknownSkillError{Name: name, Near: layering.Nearest(cat.Winners, name, 3)}
}

// copyOf names the copy an entry is: its layer, its source (marketplace)
// or the configured user (user layer), and its name. ok is false for a
// name the curator cannot key, which then has no usage.
func (e *Engine) copyOf(en *layering.Entry) (curator.Copy, bool) {
	owner := ""
	switch en.Layer {
	case layering.Marketplace:
		owner = en.Source
	case layering.User:
		owner = e.cfg.User
	}
	c, err := curator.NewCopy(en.Layer, owner, en.Skill.Name)
	return c, err == nil
}

// layerDirs returns the local layers whose skills curation moves into
// their .archive/: the workspace's and the user's.
func (e *Engine) layerDirs() []curator.LayerDir {
	var out []curator.LayerDir
	for _, l := range e.localLayers() {
		switch l.layer {
		case layering.Workspace:
			out = append(out, curator.LayerDir{Layer: l.layer, Dir: l.dir})
		case layering.User:
			out = append(out, curator.LayerDir{Layer: l.layer, Owner: e.cfg.User, Dir: l.dir})
		}
	}
	return out
}

// resolverFrom maps a bare name of a version-1 usage file to the copy that
// wins it in cat.
func (e *Engine) resolverFrom(cat *layering.Catalog) func(string) (curator.Copy, bool) {
	return func(name string) (curator.Copy, bool) {
		w, ok := cat.Lookup(name)
		if !ok {
			return curator.Copy{}, false
		}
		return e.copyOf(&w.Entry)
	}
}

// lazyResolver is resolverFrom over a catalog built, once and only when a
// version-1 usage file is met, without reading usage.
func (e *Engine) lazyResolver() func(string) (curator.Copy, bool) {
	var once sync.Once
	resolve := func(string) (curator.Copy, bool) { return curator.Copy{}, false }
	return func(name string) (curator.Copy, bool) {
		once.Do(func() {
			m, err := materialize.ReadManifest(e.CacheDir())
			if err != nil {
				m = materialize.NewManifest()
			}
			if cat, err := e.buildCatalog(context.Background(), m); err == nil {
				resolve = e.resolverFrom(cat)
			}
		})
		return resolve(name)
	}
}

// Use records that a catalog skill was used (or, with view, looked at)
// now, through skillsync use.
func (e *Engine) Use(ctx context.Context, name string, view bool) (string, error) {
	return e.UseFrom(ctx, name, view, curator.FromCLI)
}

// UseFrom records a use (or a view) of the copy of name that wins now,
// saying where it came from. A stale copy becomes active at once.
func (e *Engine) UseFrom(ctx context.Context, name string, view bool, from curator.Source) (string, error) {
	w, _, err := e.Lookup(ctx, name)
	if err != nil {
		return "", err
	}
	c, ok := e.copyOf(&w.Entry)
	if !ok {
		return "", fmt.Errorf("record a use of %q: the name cannot be recorded", name)
	}
	_, err = e.Usage().Record(ctx, curator.Use{Copy: c, View: view, From: from, At: e.now(), Actor: e.actor()})
	return w.Skill.Name, err
}

// Pin keeps a skill as it is through every curation; unpinned, it is
// curated again.
func (e *Engine) Pin(ctx context.Context, name string, pinned bool) (string, error) {
	w, _, err := e.Lookup(ctx, name)
	if err != nil {
		return "", err
	}
	c, ok := e.copyOf(&w.Entry)
	if !ok {
		return "", fmt.Errorf("pin %q: the name cannot be recorded", name)
	}
	_, err = e.Usage().Pin(ctx, c, pinned, e.actor(), e.now())
	return w.Skill.Name, err
}

// CurateOptions change a curation.
type CurateOptions struct {
	// Now is the moment curation judges idle time at; zero means now.
	Now time.Time
	// DryRun plans and changes nothing.
	DryRun bool
	// Force curates even while a skill was used within min_idle, and
	// archives in a workspace that never recorded a use.
	Force bool
}

// Curate marks idle copies stale, archives long-idle ones, and makes
// stale copies that were used since active again. Archiving a local skill
// moves its directory to <layer dir>/.archive/<name>-<stamp>/; archiving a
// marketplace skill takes it out of the cache and the targets.
func (e *Engine) Curate(ctx context.Context, opts CurateOptions) (curator.Plan, error) {
	now := opts.Now
	if now.IsZero() {
		now = e.now()
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return curator.Plan{}, err
	}
	layerDir := map[layering.Layer]string{}
	for _, l := range e.layerDirs() {
		layerDir[l.Layer] = l.Dir
	}
	var candidates []curator.Candidate
	for _, w := range cat.Winners {
		c, ok := e.copyOf(&w.Entry)
		if !ok {
			continue
		}
		cand := curator.Candidate{Copy: c}
		if w.Layer != layering.Marketplace {
			cand.Dir, cand.LayerDir = w.Dir, layerDir[w.Layer]
		}
		candidates = append(candidates, cand)
	}
	store := e.Usage()
	store.Resolve = e.resolverFrom(cat)
	plan, err := store.Curate(ctx, curator.Curation{Policy: e.cfg.Curator, Candidates: candidates, Now: now,
		Force: opts.Force, DryRun: opts.DryRun, Actor: e.actor()})
	if err != nil || opts.DryRun {
		return plan, err
	}
	for _, c := range plan.Changes {
		if c.To == curator.Archived && c.Copy.Layer == layering.Marketplace {
			if _, err := e.Sync(ctx, SyncOptions{Offline: true}); err != nil {
				return plan, fmt.Errorf("take archived skills out of the cache: %w", err)
			}
			break
		}
	}
	return plan, nil
}

// ArchivedCopy is a local skill in its layer's .archive directory.
type ArchivedCopy = curator.ArchivedCopy

// ArchivedCopies lists the archived local skills of the workspace and
// user layers, newest first.
func (e *Engine) ArchivedCopies() []ArchivedCopy {
	return curator.ArchivedCopies(e.layerDirs()...)
}

// Restore makes an archived skill active again: a local skill's newest
// archived copy moves back, and a marketplace skill is materialized again
// at once. It refuses, saying why, when a skill of that name now stands
// where the copy would go.
func (e *Engine) Restore(ctx context.Context, name string) (string, error) {
	key := layering.Key(name)
	for _, c := range e.ArchivedCopies() {
		if layering.Key(c.Name) != key {
			continue
		}
		if err := c.CanRestore(); err != nil {
			return "", err
		}
		if w, _, err := e.Lookup(ctx, c.Name); err == nil && w.Layer >= c.Layer {
			return "", fmt.Errorf("restore %s: a skill of that name now comes from %s (%s layer); the archived copy stays in %s", c.Name, w.Source, w.Layer, c.Dir)
		}
		dst, err := c.Restore()
		if err != nil {
			return "", err
		}
		return c.Name, e.Usage().MarkRestored(ctx, c.Copy, e.actor(), "moved back from "+c.Dir+" to "+dst, e.now())
	}
	u, err := e.Usage().Load()
	if err != nil {
		return "", err
	}
	for _, c := range u.Archived(name) {
		if c.Layer != layering.Marketplace {
			continue
		}
		if err := e.Usage().MarkRestored(ctx, c, e.actor(), "materialized again", e.now()); err != nil {
			return c.Name, err
		}
		_, err := e.Sync(ctx, SyncOptions{Offline: true})
		return c.Name, err
	}
	return "", fmt.Errorf("restore %s: no archived skill of that name", name)
}
