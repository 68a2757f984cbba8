// Package layering merges the skills of every source into one Catalog by
// the four-layer priority: global < marketplace < workspace < user. It
// keeps the provenance of every winner, and searches and renders the
// catalog for agents. It never writes files.
package layering

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/skillsync/skillsync/skill"
)

// Layer is where a source stands in the priority order; a higher layer
// wins.
type Layer int

// The layers, lowest priority first.
const (
	Global Layer = iota + 1
	Marketplace
	Workspace
	User
)

var layerNames = map[Layer]string{Global: "global", Marketplace: "marketplace", Workspace: "workspace", User: "user"}

// String returns the layer's name as config and JSON spell it.
func (l Layer) String() string {
	if n, ok := layerNames[l]; ok {
		return n
	}
	return fmt.Sprintf("layer(%d)", int(l))
}

// MarshalText makes a Layer its name in JSON.
func (l Layer) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Input is the skills of one source.
type Input struct {
	Layer    Layer
	Source   string
	Revision string
	Skills   []skill.Skill
	// Dir returns the directory a skill can be read from on disk, or "" when
	// it has none yet. nil means none of the skills has one.
	Dir func(skill.Skill) string
}

// Entry is one skill from one source.
type Entry struct {
	Skill    skill.Skill
	Layer    Layer
	Source   string
	Revision string
	// Dir is the skill's directory on disk, "" when it has none.
	Dir string
}

// Location returns the path of the skill's SKILL.md on disk, or "".
func (e *Entry) Location() string {
	if e.Dir == "" {
		return ""
	}
	return strings.TrimRight(e.Dir, "/") + "/" + e.Skill.File
}

// Winner is the entry that won its name, with the entries it shadows,
// highest priority first.
type Winner struct {
	Entry
	Shadowed []Entry
	// Hidden is set for names the config hides: they stay out of list,
	// search and prompt unless asked for.
	Hidden bool
	// State is the curator's word on the skill: active, stale or archived.
	// Archived skills stay out of list, search and prompt like hidden ones.
	State string

	// lower holds the lower-cased text search reads, made on the first
	// search: most commands never search, and a winner is copied into a
	// slab of thousands.
	lowerOnce sync.Once
	lower     *searchText
}

// Options change how a catalog is built.
type Options struct {
	// Hidden names are kept in the catalog but marked Hidden.
	Hidden []string
}

// Catalog is the merged view of every source.
type Catalog struct {
	// Winners in order of their lower-cased names.
	Winners  []*Winner
	Problems []skill.Problem
	// Held are the entries this host does not take (staged rollout),
	// each with why; they take no part in the merge.
	Held  []Held
	byKey map[string]*Winner
}

// Held is an entry left out of the merge on this host, with the reason.
type Held struct {
	Entry
	Reason string
}

// Key is how names compare: case-insensitively, after NFKC.
func Key(name string) string { return strings.ToLower(skill.NormalizeName(name)) }

// Build merges inputs. Inputs in a lower layer lose to inputs in a higher
// one; within a layer, a later input wins over an earlier one. Within one
// input, two skills of the same name are resolved by path: the first in
// lexical order wins and the other is reported as a duplicate.
func Build(inputs []Input, opts Options) *Catalog {
	ordered := make([]Input, len(inputs))
	copy(ordered, inputs)
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].Layer < ordered[j].Layer })

	total := 0
	for _, in := range inputs {
		total += len(in.Skills)
	}
	c := &Catalog{byKey: make(map[string]*Winner, total)}
	// The winners are cut from one slab, never grown past total: one
	// allocation, not one per skill.
	slab := make([]Winner, 0, total)
	keys := make([]string, 0, total) // slab[i]'s key
	for _, in := range ordered {
		for _, k := range c.dedupe(in) {
			if w, ok := c.byKey[k.key]; ok {
				w.Shadowed = append([]Entry{w.Entry}, w.Shadowed...)
				w.Entry = entryOf(in, k.index)
				continue
			}
			slab = append(slab, Winner{Entry: entryOf(in, k.index)})
			keys = append(keys, k.key)
			c.byKey[k.key] = &slab[len(slab)-1]
		}
	}
	for _, name := range opts.Hidden {
		if w, ok := c.byKey[Key(name)]; ok {
			w.Hidden = true
		}
	}
	// Sorted by key once, not by keys computed again in every comparison:
	// with thousands of skills that was most of a build. One source's
	// skills, read from the cache in name order, come sorted already.
	order := make([]int, len(slab))
	for i := range order {
		order[i] = i
	}
	if !slices.IsSorted(keys) {
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	}
	c.Winners = make([]*Winner, len(order))
	for i, at := range order {
		c.Winners[i] = &slab[at]
	}
	return c
}

// kept is a skill of an input that dedupe keeps: its index in the
// input's Skills, with its Key.
type kept struct {
	index int
	key   string
}

// entryOf is the entry of the input's skill at index i.
func entryOf(in Input, i int) Entry {
	e := Entry{Skill: in.Skills[i], Layer: in.Layer, Source: in.Source, Revision: in.Revision}
	if in.Dir != nil {
		e.Dir = in.Dir(in.Skills[i])
	}
	return e
}

// dedupe returns the skills of one input that remain once in-source
// duplicates are removed and reported, in path order. It returns
// indexes, not entries: a Skill is large to move, and each one copied
// here was copied again into its winner, a megabyte of fresh memory for
// every 2,000 skills a command reads.
func (c *Catalog) dedupe(in Input) []kept {
	out := make([]kept, len(in.Skills))
	for i := range out {
		out[i].index = i
	}
	byPath := func(a, b kept) int { return strings.Compare(in.Skills[a.index].Path, in.Skills[b.index].Path) }
	if !slices.IsSortedFunc(out, byPath) {
		slices.SortStableFunc(out, byPath)
	}
	first := make(map[string]int, len(out))
	n := 0
	for _, k := range out {
		s := &in.Skills[k.index]
		key := Key(s.Name)
		if winner, dup := first[key]; dup {
			c.Problems = append(c.Problems, skill.Problem{
				Level: skill.Warning, Rule: "duplicate-name", Source: in.Source, Skill: s.Name, Path: s.Path, File: s.Path,
				Message: fmt.Sprintf("skill %q is also at %s, which sorts first and wins; rename or remove one", s.Name, in.Skills[winner].Path),
			})
			continue
		}
		first[key] = k.index
		out[n] = kept{index: k.index, key: key}
		n++
	}
	return out[:n]
}

// Lookup returns the winner for name, compared case-insensitively.
func (c *Catalog) Lookup(name string) (*Winner, bool) {
	w, ok := c.byKey[Key(name)]
	return w, ok
}

// Archived is the State of a skill the curator archived.
const Archived = "archived"

// Unsynced is the State of a marketplace skill whose files are not in
// the cache though the curator no longer holds it archived: restored
// since the sync that archived it out, until a sync brings it back.
const Unsynced = "unsynced"

// Visible reports whether agents see w (the targets, list, the prompt):
// it is neither hidden, nor archived, nor unsynced.
func (w *Winner) Visible() bool {
	return !w.Hidden && w.State != Archived && w.State != Unsynced
}

// Visible returns the winners that are Visible.
func (c *Catalog) Visible() []*Winner {
	var out []*Winner
	for _, w := range c.Winners {
		if w.Visible() {
			out = append(out, w)
		}
	}
	return out
}
