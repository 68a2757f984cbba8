package materialize

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/internal/skillmeta"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// FromSkills turns discovered skills into what the cache writes, each
// with its frontmatter to keep in the manifest (the read commands take it
// from there and parse no SKILL.md) and the source's own content key (a
// git tree) when it has one. guessModes is set for files that carry no
// permission bits (a file system compiled into the program).
func FromSkills(skills []skill.Skill, guessModes bool) []Skill {
	out := make([]Skill, 0, len(skills))
	for _, s := range skills {
		m := Skill{Name: s.Name, Files: s.Files, List: s.FileList(), GuessModes: guessModes}
		m.Fingerprint = repository.ContentKey(s.Files)
		if meta, err := skillmeta.Encode(s.Meta()); err == nil {
			m.Meta = meta
		}
		out = append(out, m)
	}
	return out
}

// CachedSkills reads source's skills back from dir, its folder in the
// cache, as rec records them: each with the frontmatter the record keeps
// (no SKILL.md is parsed) and its files read from the cache on demand. A
// skill whose record does not hold is a problem; the skills the curator
// archived, which are not in the cache, come as names only, so that list
// --all and restore can name them. err is a cache folder that cannot be
// opened.
func CachedSkills(dir, source string, rec *SourceRecord) ([]skill.Skill, []skill.Problem, error) {
	if len(rec.Skills) == 0 && len(rec.Excluded) == 0 {
		return nil, nil, nil
	}
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		return nil, nil, err
	}
	var problems []skill.Problem
	out := make([]skill.Skill, 0, len(rec.Skills)+len(rec.Excluded))
	for _, name := range rec.sortedSkills() {
		s, err := cachedSkill(fsys, name, rec.Skills[name])
		if err != nil {
			problems = append(problems, skill.Problem{Level: skill.Error, Rule: "cache-unreadable", Source: source, Skill: name,
				Message: fmt.Sprintf("%v; run skillsync sync", err)})
			continue
		}
		out = append(out, s)
	}
	for _, name := range rec.Excluded {
		out = append(out, skill.Skill{Name: name, Path: name, File: "SKILL.md"})
	}
	return out, problems, nil
}

// cachedSkill rebuilds a cached skill from its record: the frontmatter
// kept at sync time, with its files read from the cache on demand
// (FileList walks them: only show and the targets ask). A record without
// frontmatter (written by an older skillsync) is parsed from the cached
// SKILL.md instead.
func cachedSkill(source *repository.DirFS, name string, rec *SkillRecord) (skill.Skill, error) {
	files, err := source.Sub(name)
	if err != nil {
		return skill.Skill{}, err
	}
	var s skill.Skill
	if len(rec.Meta) > 0 {
		meta, err := skillmeta.Decode(rec.Meta)
		if err != nil {
			return skill.Skill{}, fmt.Errorf("skill %s: its record in the manifest: %w", name, err)
		}
		s = skill.FromMeta(meta, files)
	} else {
		parsed, problems := skill.Load(files, name, name)
		if skill.HasError(problems, false) {
			return skill.Skill{}, fmt.Errorf("skill %s: its cached SKILL.md does not load", name)
		}
		s = parsed
	}
	if s.Name != name {
		return skill.Skill{}, fmt.Errorf("skill %s: the manifest records it as %q", name, s.Name)
	}
	return s, nil
}

// Compare lists what skills, a source's skills upstream, would change in
// rec, what the cache holds of the source (nil: nothing): the names an
// update would add, change and remove, each sorted. A skill's content is
// compared by its source's content key (a git tree) when both have one,
// nothing read, else by its skill hash. problems are the read's: a
// recorded skill they say was not read whole, or that a listing cut at
// max_entries did not reach, is kept by a sync (Held): it is not removed
// here, nor changed by a copy of its name found elsewhere; nor is one the
// new revision brings invalid (Invalidated), which a sync keeps too.
func Compare(ctx context.Context, skills []skill.Skill, rec *SourceRecord, problems []skill.Problem) (added, changed, removed []string) {
	added, changed, removed = []string{}, []string{}, []string{}
	old := map[string]*SkillRecord{}
	if rec != nil {
		old = rec.Skills
	}
	held := map[string]bool{}
	for _, name := range Held(rec, skills, problems, nil) {
		held[name] = true
	}
	for name := range Invalidated(rec, skills, problems, nil) {
		held[name] = true
	}
	seen := map[string]bool{}
	for _, sk := range skills {
		seen[sk.Name] = true
		prev, had := old[sk.Name]
		switch {
		case held[sk.Name]:
			// A copy found elsewhere while the recorded one is held: the
			// sync keeps the recorded one.
		case !had:
			added = append(added, sk.Name)
		case !sameContent(ctx, sk, prev):
			changed = append(changed, sk.Name)
		}
	}
	for name := range old {
		if !seen[name] && !held[name] {
			removed = append(removed, name)
		}
	}
	slices.Sort(added)
	slices.Sort(changed)
	slices.Sort(removed)
	return added, changed, removed
}

// sameContent reports whether sk has the content the cache recorded.
func sameContent(ctx context.Context, sk skill.Skill, rec *SkillRecord) bool {
	if key := repository.ContentKey(sk.Files); key != "" && rec.Fingerprint != "" {
		return rec.Fingerprint == key
	}
	h, err := SkillHash(ctx, sk.Files, sk.FileList())
	return err == nil && h == rec.Hash
}

// Held lists, sorted, the skills rec records that a sync keeps although
// the read did not find them, because problems say it could not tell
// whether the source still has them:
//   - a skill not read whole (by its name, or by its folder where the
//     read could not tell the name);
//   - every skill at or under a folder that could not be read;
//   - every one, where the listing stopped at max_entries;
//   - an archived one (Excluded, recorded by name only), where a folder
//     could not be read or the listing was cut.
//
// A skill the read found elsewhere (found) is held too when its recorded
// copy sorts first by path and the read could not tell of it: that copy
// would win, and Held's caller leaves the one found out. selects, when
// not nil, is the source's selection (skills:, exclude:): a skill it no
// longer takes is not held, whatever the read.
func Held(rec *SourceRecord, found []skill.Skill, problems []skill.Problem, selects func(skill.Skill) bool) []string {
	if rec == nil || len(problems) == 0 {
		return nil
	}
	cut := Cut(problems)
	names := map[string]bool{}
	var folders []string
	for _, p := range problems {
		switch {
		case Unreadable(p) && p.Skill != "":
			names[p.Skill] = true
		case Unreadable(p) || p.Rule == "dir-unreadable":
			folders = append(folders, p.Path)
		case p.Rule == "plugin-manifest-unreadable":
			// What it declares, anywhere in the source, is unknown.
			folders = append(folders, ".")
		}
	}
	if !cut && len(names) == 0 && len(folders) == 0 {
		return nil
	}
	// Names compare as the merge compares them: Foo and foo are one.
	seen := make(map[string]string, len(found))
	for _, sk := range found {
		seen[layering.Key(sk.Name)] = sk.Path
	}
	var out []string
	for name, r := range rec.Skills {
		// Where the record says the skill lies; "" when it cannot say.
		at := ""
		if meta, err := skillmeta.Decode(r.Meta); err == nil && meta.Name == name {
			at = meta.Path
			if selects != nil && !selects(skill.FromMeta(meta, nil)) {
				continue
			}
		} else if selects != nil && !selects(skill.Skill{Name: name}) {
			continue
		}
		unknown := cut || names[name] || (at != "" && under(at, folders))
		if foundAt, ok := seen[layering.Key(name)]; ok {
			// Found elsewhere: held only where the recorded copy would win
			// and the read could not tell of it.
			unknown = at != "" && at < foundAt && (cut || under(at, folders))
		}
		if unknown {
			out = append(out, name)
		}
	}
	for _, name := range rec.Excluded {
		if _, ok := seen[layering.Key(name)]; !ok && (cut || names[name] || len(folders) > 0) && (selects == nil || selects(skill.Skill{Name: name})) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// under reports whether the path at, in its source, lies at or below one
// of folders.
func under(at string, folders []string) bool {
	for _, f := range folders {
		if f == "." || at == f || strings.HasPrefix(at, f+"/") {
			return true
		}
	}
	return false
}

// Invalidated lists, by name, the skills rec records that the read found
// at the same path and invalid (Invalid), each with the first problem
// that says so. A sync keeps their last good copies rather than take a
// working skill off every agent for one bad upstream commit; Held does
// not name them, since this read could tell, and what it found is
// broken. A skill the read found valid elsewhere is not kept: that copy
// replaces it. A record that cannot say where its skill lay (written by
// an older skillsync) is matched by the skill's name or its folder's;
// so is an archived skill, recorded by name only. selects is as in
// Held. nil when nothing is kept.
func Invalidated(rec *SourceRecord, found []skill.Skill, problems []skill.Problem, selects func(skill.Skill) bool) map[string]skill.Problem {
	if rec == nil {
		return nil
	}
	byPath := map[string]skill.Problem{}
	for _, p := range problems {
		if _, ok := byPath[p.Path]; Invalid(p) && !ok {
			byPath[p.Path] = p
		}
	}
	if len(byPath) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(found))
	for _, sk := range found {
		seen[layering.Key(sk.Name)] = true
	}
	byName := func(name string) (skill.Problem, bool) { return invalidNamed(byPath, name) }
	var out map[string]skill.Problem
	keep := func(name string, p skill.Problem) {
		if out == nil {
			out = map[string]skill.Problem{}
		}
		out[name] = p
	}
	for name, r := range rec.Skills {
		if seen[layering.Key(name)] {
			continue
		}
		if meta, err := skillmeta.Decode(r.Meta); err == nil && meta.Name == name && meta.Path != "" {
			if p, ok := byPath[meta.Path]; ok && (selects == nil || selects(skill.FromMeta(meta, nil))) {
				keep(name, p)
			}
			continue
		}
		if p, ok := byName(name); ok && (selects == nil || selects(skill.Skill{Name: name})) {
			keep(name, p)
		}
	}
	for _, name := range rec.Excluded {
		if p, ok := byName(name); ok && !seen[layering.Key(name)] && (selects == nil || selects(skill.Skill{Name: name})) {
			keep(name, p)
		}
	}
	return out
}

// InvalidNamed returns the first problem that says the read found the
// skill name invalid (Invalid), matched by the name the problem gives or,
// where its SKILL.md did not say one, by its folder's name: for a skill
// known by name only, such as one skillsync.lock has.
func InvalidNamed(problems []skill.Problem, name string) (skill.Problem, bool) {
	byPath := map[string]skill.Problem{}
	for _, p := range problems {
		if _, ok := byPath[p.Path]; Invalid(p) && !ok {
			byPath[p.Path] = p
		}
	}
	return invalidNamed(byPath, name)
}

// invalidNamed is InvalidNamed over the first invalid problem of each
// path, looked at in path order.
func invalidNamed(byPath map[string]skill.Problem, name string) (skill.Problem, bool) {
	for _, at := range slices.Sorted(maps.Keys(byPath)) {
		if p := byPath[at]; strings.EqualFold(p.Skill, name) || (p.Skill == "" && strings.EqualFold(path.Base(at), name)) {
			return p, true
		}
	}
	return skill.Problem{}, false
}

// Invalid reports whether p is an error of one skill's own content as
// its source now has it: its frontmatter, its name, a rule strict mode
// enforces, its size past max_skill_size. Not a read that failed
// (Unreadable: Held's), a limit of the whole source (max_source_size
// leaves a skill out on every machine alike, as the limit asks;
// max_entries: Cut), nor a problem of no skill's folder.
func Invalid(p skill.Problem) bool {
	if p.Level != skill.Error || p.Path == "" || p.Path == "." || Unreadable(p) {
		return false
	}
	switch p.Rule {
	case "source-too-large", "source-too-many-entries", "plugin-manifest-unreadable", "plugin-unknown":
		return false
	}
	return true
}

// Unreadable reports whether p says a skill was not read whole: its
// SKILL.md, one of its files or one of its folders could not be read.
func Unreadable(p skill.Problem) bool {
	return p.Level == skill.Error && (p.Rule == "file-unreadable" || p.Rule == "dir-unreadable" || p.Rule == "skill-md-unreadable")
}

// Cut reports whether problems say the source's listing stopped at
// max_entries: a skill it did not reach may still be there, and a sync
// keeps what the cache has of it.
func Cut(problems []skill.Problem) bool {
	return slices.ContainsFunc(problems, func(p skill.Problem) bool {
		return p.Level == skill.Error && p.Rule == "source-too-many-entries"
	})
}
