// Package layering merges the skills of every source into one Catalog by
// the four-layer priority: global < marketplace < workspace < user. It
// keeps the provenance of every winner, and searches and renders the
// catalog for agents. It never writes files.
package layering

import (
	"fmt"
	"maps"
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

	// lower holds the lower-cased text search reads, made once.
	lowerOnce sync.Once
	lower     searchText
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
	for _, in := range ordered {
		for _, k := range c.dedupe(in) {
			if w, ok := c.byKey[k.key]; ok {
				w.Shadowed = append([]Entry{w.Entry}, w.Shadowed...)
				w.Entry = k.Entry
				continue
			}
			slab = append(slab, Winner{Entry: k.Entry})
			c.byKey[k.key] = &slab[len(slab)-1]
		}
	}
	for _, name := range opts.Hidden {
		if w, ok := c.byKey[Key(name)]; ok {
			w.Hidden = true
		}
	}
	// Sorted by key once, not by keys computed again in every comparison:
	// with thousands of skills that was most of a build.
	c.Winners = make([]*Winner, 0, len(c.byKey))
	for _, key := range slices.Sorted(maps.Keys(c.byKey)) {
		c.Winners = append(c.Winners, c.byKey[key])
	}
	return c
}

// keyed is an entry with its Key.
type keyed struct {
	Entry
	key string
}

// dedupe returns the entries of one input with in-source duplicates
// removed and reported. The skills are sorted by path through their
// indexes: a Skill is large to move.
func (c *Catalog) dedupe(in Input) []keyed {
	order := make([]int, len(in.Skills))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(in.Skills[a].Path, in.Skills[b].Path) })
	first := make(map[string]string, len(order))
	out := make([]keyed, 0, len(order))
	for _, i := range order {
		s := &in.Skills[i]
		key := Key(s.Name)
		if winner, dup := first[key]; dup {
			c.Problems = append(c.Problems, skill.Problem{
				Level: skill.Warning, Rule: "duplicate-name", Source: in.Source, Skill: s.Name, Path: s.Path, File: s.Path,
				Message: fmt.Sprintf("skill %q is also at %s, which sorts first and wins; rename or remove one", s.Name, winner),
			})
			continue
		}
		first[key] = s.Path
		e := keyed{Entry: Entry{Skill: *s, Layer: in.Layer, Source: in.Source, Revision: in.Revision}, key: key}
		if in.Dir != nil {
			e.Dir = in.Dir(*s)
		}
		out = append(out, e)
	}
	return out
}

// Lookup returns the winner for name, compared case-insensitively.
func (c *Catalog) Lookup(name string) (*Winner, bool) {
	w, ok := c.byKey[Key(name)]
	return w, ok
}

// Archived is the State of a skill the curator archived.
const Archived = "archived"

// Visible returns the winners that are neither hidden nor archived.
func (c *Catalog) Visible() []*Winner {
	var out []*Winner
	for _, w := range c.Winners {
		if !w.Hidden && w.State != Archived {
			out = append(out, w)
		}
	}
	return out
}
