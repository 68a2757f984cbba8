package materialize

import (
	"slices"
	"strings"
	"sync"

	"github.com/skillsync/skillsync/internal/binrec"
	"github.com/skillsync/skillsync/internal/skillmeta"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Known answers discovery's Options.Known (known) and Options.Knows
// (knows) for source from what the cache recorded the last time the
// source was read under the same discovery digest: a skill whose git
// tree ("tree:<hash>") did not change is taken from its record, its
// SKILL.md not parsed and its folder not listed, whatever the commit or
// ref; knows says whether there is such a record, nothing decoded. Both
// are nil when the cache holds nothing of source, and may be asked from
// several goroutines at once: what they read is loaded and indexed once,
// at the first question (a sync that finds its sources unchanged asks
// none, and loads no file records).
func (c *Cache) Known(source, discovery string) (known func(string) (skill.Meta, []skill.File, bool), knows func(string) bool) {
	a := c.answers(source, discovery)
	return a.known, a.knows
}

// answers are the cache's answers to discovery's questions about one
// source (Known, and recalled for Options.Recalled), all nil when the
// cache holds nothing of it.
type answers struct {
	known    func(string) (skill.Meta, []skill.File, bool)
	knows    func(string) bool
	recalled func(string) (skill.Meta, string, bool)
}

func (c *Cache) answers(source, discovery string) answers {
	src := c.manifest.Sources[source]
	if src == nil {
		return answers{}
	}
	var load sync.Once
	loaded := func() {
		load.Do(func() {
			if discovery != "" && src.Discovery == discovery {
				c.fingerprints(source, src)
			}
		})
	}
	record := func(key string) (string, *SkillRecord, bool) {
		loaded()
		hash, ok := strings.CutPrefix(key, "tree:")
		if !ok {
			return "", nil, false
		}
		name, sk, ok := c.Recorded(source, discovery, "git-tree:"+hash)
		return name, sk, ok && len(sk.Meta) > 0
	}
	meta := func(name string, sk *SkillRecord) (skill.Meta, bool) {
		meta, err := skillmeta.Decode(sk.Meta)
		return meta, err == nil && meta.Name == name
	}
	var a answers
	a.knows = func(key string) bool {
		_, _, ok := record(key)
		return ok
	}
	a.known = func(key string) (skill.Meta, []skill.File, bool) {
		name, sk, ok := record(key)
		if !ok {
			return skill.Meta{}, nil, false
		}
		m, ok := meta(name, sk)
		if !ok {
			return skill.Meta{}, nil, false
		}
		return m, sk.listing(), true
	}
	// The frontmatter of the skill named name as the cache recorded it,
	// and the git tree it was read from; under the same conditions as
	// known's records (the same discovery, file records readable).
	a.recalled = func(name string) (skill.Meta, string, bool) {
		loaded()
		if discovery == "" || src.Discovery != discovery || src.filesLost {
			return skill.Meta{}, "", false
		}
		sk := src.Skills[name]
		if sk == nil || len(sk.Meta) == 0 || !strings.HasPrefix(sk.Fingerprint, "git-tree:") {
			return skill.Meta{}, "", false
		}
		m, ok := meta(name, sk)
		return m, sk.Fingerprint, ok
	}
	return a
}

// Answer sets what discovery of source takes from the cache: Known,
// Knows and Recalled (see Known and answers), and Expect, the number of
// skills the cache holds of it.
func (c *Cache) Answer(opts *repository.Options, source, discovery string) {
	c.Answers(source, discovery)(opts)
}

// Answers returns a function that does what Answer does to the options
// it is given, for a source opened before the cache was read
// (Options.Late): every discovery of the source then shares one set of
// answers, loaded once, as Answer's would be, whatever the cache's
// manifest holds by then.
func (c *Cache) Answers(source, discovery string) func(*repository.Options) {
	a := c.answers(source, discovery)
	src := c.manifest.Sources[source]
	expect := 0
	if src != nil {
		expect = len(src.Skills)
	}
	return func(opts *repository.Options) {
		opts.Known, opts.Knows, opts.Recalled = a.known, a.knows, a.recalled
		if src != nil {
			opts.Expect = expect
		}
	}
}

// ExcludedOf returns which of the archived names the cached source r
// would leave out, as the fast path compares them: the ones it now holds
// or left out before, sorted. A name archived that the source never had
// changes nothing. A nil r has none.
func (r *SourceRecord) ExcludedOf(archived map[string]bool) []string {
	if r == nil {
		return nil
	}
	var out []string
	for name := range archived {
		if _, cached := r.Skills[name]; cached || slices.Contains(r.Excluded, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Brought is the size of the skills changes added or updated in r, as it
// holds them now: a repair brought nothing new.
func (r *SourceRecord) Brought(changes []Change) int64 {
	if r == nil {
		return 0
	}
	var n int64
	for _, c := range changes {
		if c.Op == Removed || c.Op == Repaired {
			continue
		}
		if sk, ok := r.Skills[c.Name]; ok && sk != nil {
			for _, f := range sk.Files() {
				n += f.Size
			}
		}
	}
	return n
}

// listing returns the record's files as a listing, in path order. A lazy
// record's are read from raw, in the order the records keep them, with
// no map made: a sync takes thousands of skills from here.
func (r *SkillRecord) listing() []skill.File {
	if !r.lazy {
		files := make([]skill.File, 0, len(r.files))
		for p, f := range r.files {
			files = append(files, skill.File{Path: p, Size: f.Size, Mode: f.Perm()})
		}
		slices.SortFunc(files, func(a, b skill.File) int { return strings.Compare(a.Path, b.Path) })
		return files
	}
	files := make([]skill.File, 0, r.fileCount())
	_ = eachFile(binrec.NewDecoder(r.raw, ""), "", func(p string, f FileRecord) {
		files = append(files, skill.File{Path: p, Size: f.Size, Mode: f.Perm()})
	})
	return files
}
