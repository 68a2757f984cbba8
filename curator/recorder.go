package curator

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/layering"
)

// Recorder is a workspace's usage as package agent records into it
// (agent.Recorder): the visible winners of one catalog and a usage store.
type Recorder struct {
	cat     *layering.Catalog
	store   *Store
	copyOf  func(*layering.Entry) (Copy, bool)
	targets []RecorderTarget
	actor   string
	// paths maps each SKILL.md an agent may read (where the catalog has
	// the skill, and in every target) to its winner; made on first use.
	paths map[string]*layering.Winner
	// copies are the copies Resolve gave, by name.
	copies map[string]Copy
}

var _ agent.Recorder = (*Recorder)(nil)

// RecorderTarget is a folder agents read skills from. Folder says which
// folder in it holds a skill, and false when the target holds none of
// that name (not placed yet, or left out because a folder the user made
// stands where it would go); nil when the target's record could not be
// read, and then each skill is taken to be in the folder of its name.
// Agents are the keys of the agents that look for skills in the folder.
type RecorderTarget struct {
	Dir    string
	Folder func(name string) (string, bool)
	Agents []string
}

// folder returns the folder of the target that holds the skill name.
func (t RecorderTarget) folder(name string) (string, bool) {
	if t.Folder == nil {
		return name, true
	}
	return t.Folder(name)
}

// NewRecorder records into store the uses of cat's visible skills, each
// named as copyOf names its copy, found by name or by the path of its
// SKILL.md where the catalog has it or in one of the target folders;
// actor is who records them.
func NewRecorder(cat *layering.Catalog, store *Store, copyOf func(*layering.Entry) (Copy, bool), targets []RecorderTarget, actor string) *Recorder {
	return &Recorder{cat: cat, store: store, copyOf: copyOf, targets: targets, actor: actor, copies: map[string]Copy{}}
}

// Resolve returns the copy an event of the agent keyed key names: by
// name for a use of the skill tool, by the path of its SKILL.md for a
// read. Hidden and archived skills are no skills here: they are in no
// target.
func (r *Recorder) Resolve(key string, ev agent.Event) (string, bool) {
	var w *layering.Winner
	if ev.Skill != "" {
		w, _ = r.cat.Lookup(ev.Skill)
		if w != nil && !r.reaches(key, w.Skill.Name) {
			return "", false
		}
	} else if ev.Path != "" {
		if r.paths == nil {
			r.paths = r.skillFiles()
		}
		w = r.paths[filepath.Clean(ev.Path)]
	}
	if w == nil || !w.Visible() {
		return "", false
	}
	c, ok := r.copyOf(&w.Entry)
	if !ok {
		return "", false
	}
	r.copies[c.Name] = c
	return c.Name, true
}

// reaches reports whether the skill the agent keyed key called by name
// can be the workspace's: the agent reads none of the targets (it found
// the skill another way, as through the MCP server), or one of those it
// reads holds the skill. Where each left it out, the agent called a
// skill of the same name from elsewhere, such as the user's own folder
// standing where the workspace's would go.
func (r *Recorder) reaches(key, name string) bool {
	reads := false
	for _, t := range r.targets {
		if !slices.Contains(t.Agents, key) {
			continue
		}
		if _, ok := t.folder(name); ok {
			return true
		}
		reads = true
	}
	return !reads
}

// LastImport returns the id of the last import of the agent's records
// whose uses the usage store holds.
func (r *Recorder) LastImport(name string) (string, error) { return r.store.LastImport(name) }

// Record records uses Resolve named in the usage store, by its actor, as
// the import id of the agent's records.
func (r *Recorder) Record(ctx context.Context, uses []agent.Use, name, id string) ([]string, error) {
	out := make([]Use, 0, len(uses))
	for _, u := range uses {
		c, ok := r.copies[u.Skill]
		if !ok {
			return nil, fmt.Errorf("record a use of %q: not a skill the import resolved", u.Skill)
		}
		out = append(out, Use{Copy: c, View: u.View, From: Source(u.From), At: u.At, Actor: r.actor})
	}
	re, err := r.store.RecordImport(ctx, out, name, id)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(re))
	for _, c := range re {
		names = append(names, c.Name)
	}
	return names, nil
}

func (r *Recorder) skillFiles() map[string]*layering.Winner {
	out := map[string]*layering.Winner{}
	for _, w := range r.cat.Visible() {
		file := cmp.Or(w.Skill.File, "SKILL.md")
		if loc := w.Location(); loc != "" {
			out[filepath.Clean(loc)] = w
		}
		for _, t := range r.targets {
			if folder, ok := t.folder(w.Skill.Name); ok {
				out[filepath.Join(t.Dir, folder, file)] = w
			}
		}
	}
	return out
}
