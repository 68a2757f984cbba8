package materialize

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/internal/skillmeta"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/skill"
)

func TestCachedSkillsFromTheirRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skilltest.Skill(t, dir, "pdf", "Read PDFs.", nil)
	skilltest.Skill(t, dir, "old", "Recorded before frontmatter was kept.", nil)
	skilltest.Skill(t, dir, "liar", "Says another name.", nil)
	// The records are what the cache trusts: a frontmatter that says
	// otherwise than the SKILL.md wins, no SKILL.md is parsed.
	skills := FromSkills([]skill.Skill{{Name: "pdf", Description: "From the record.", Path: "pdf", File: "SKILL.md", Files: fstest.MapFS{}}}, false)
	rec := &SourceRecord{Excluded: []string{"archived"}, Skills: map[string]*SkillRecord{
		"pdf":  {Meta: skills[0].Meta},
		"old":  {},
		"liar": {Meta: FromSkills([]skill.Skill{{Name: "other", Description: "x", Path: "other", File: "SKILL.md", Files: fstest.MapFS{}}}, false)[0].Meta},
		"gone": {Meta: skills[0].Meta},
	}}
	got, problems, err := CachedSkills(dir, "team", rec)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"old", "pdf", "archived"}) || got[1].Description != "From the record." || got[0].Description != "Recorded before frontmatter was kept." {
		t.Errorf("skills %q: %+v", names, got)
	}
	var bad []string
	for _, p := range problems {
		bad = append(bad, p.Skill+": "+p.Message)
	}
	if len(problems) != 2 || !strings.HasPrefix(bad[0], "gone: ") || !strings.Contains(bad[1], `liar: skill liar: the manifest records it as "other"`) {
		t.Errorf("problems %q", bad)
	}
	if _, _, err := CachedSkills(filepath.Join(dir, "missing"), "team", rec); err == nil {
		t.Error("a cache folder that is not there opened")
	}
	if got, _, err := CachedSkills(filepath.Join(dir, "missing"), "team", &SourceRecord{}); got != nil || err != nil {
		t.Errorf("an empty record reads %v, %v", got, err)
	}
}

func TestCompareWithTheCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: pdf\ndescription: d\n---\n")}}
	sk := skill.Skill{Name: "pdf", Files: files}
	h, err := SkillHash(ctx, files, sk.FileList())
	if err != nil {
		t.Fatal(err)
	}
	rec := &SourceRecord{Skills: map[string]*SkillRecord{"pdf": {Hash: h}, "doc": {Hash: h}, "gone": {}}}
	other := skill.Skill{Name: "doc", Files: fstest.MapFS{"SKILL.md": {Data: []byte("changed")}}}
	added, changed, removed := Compare(ctx, []skill.Skill{sk, other, {Name: "new", Files: files}}, rec, nil)
	if !slices.Equal(added, []string{"new"}) || !slices.Equal(changed, []string{"doc"}) || !slices.Equal(removed, []string{"gone"}) {
		t.Errorf("added %v changed %v removed %v", added, changed, removed)
	}
	// What a sync would keep is not removed: a skill not read whole, and
	// every skill a listing cut at max_entries did not reach.
	unread := []skill.Problem{{Level: skill.Error, Rule: "dir-unreadable", Skill: "gone", Path: "skills/gone"}}
	cut := []skill.Problem{{Level: skill.Error, Rule: "source-too-many-entries", Path: "skills/doc"}}
	for _, tc := range []struct {
		problems []skill.Problem
		removed  []string
	}{{unread, []string{"doc"}}, {cut, nil}} {
		if _, _, removed := Compare(ctx, []skill.Skill{sk}, rec, tc.problems); !slices.Equal(removed, tc.removed) {
			t.Errorf("with %s: removed %v, want %v", tc.problems[0].Rule, removed, tc.removed)
		}
	}
	// A copy found elsewhere while the recorded one is held is no change.
	metaAt := func(name, dir string) []byte {
		meta, err := skillmeta.Encode(skill.Meta{Name: name, Description: "d", File: "SKILL.md", Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		return meta
	}
	recorded := &SourceRecord{Skills: map[string]*SkillRecord{"doc": {Hash: h, Meta: metaAt("doc", "a/doc")}}}
	found := skill.Skill{Name: "doc", Path: "b/doc", Files: fstest.MapFS{"SKILL.md": {Data: []byte("another copy")}}}
	if _, changed, _ := Compare(ctx, []skill.Skill{found}, recorded, []skill.Problem{{Level: skill.Warning, Rule: "dir-unreadable", Path: "a"}}); len(changed) != 0 {
		t.Errorf("a copy found elsewhere while the recorded one is held: changed %v", changed)
	}
	if _, _, removed := Compare(ctx, []skill.Skill{sk}, rec, []skill.Problem{{Level: skill.Warning, Rule: "dir-unreadable", Skill: "gone"}}); !slices.Equal(removed, []string{"doc", "gone"}) {
		t.Errorf("a warning kept skills: removed %v", removed)
	}
	added, changed, removed = Compare(ctx, []skill.Skill{sk}, nil, nil)
	if !slices.Equal(added, []string{"pdf"}) || changed == nil || len(changed) != 0 || removed == nil {
		t.Errorf("against nothing cached: added %v changed %v removed %v", added, changed, removed)
	}
}

// TestHeld: the recorded skills a read did not find are kept only where
// its problems leave their fate unknown: a skill not read whole, by name
// or by folder; every skill at or below a folder that could not be read
// (and none beside it: "group2" is not below "group"); every skill, past
// a listing cut at max_entries.
func TestHeld(t *testing.T) {
	t.Parallel()
	rec := &SourceRecord{Skills: map[string]*SkillRecord{}}
	for name, dir := range map[string]string{"a": "skills/a", "x": "group/x", "y": "group/deep/y", "z": "group2/z", "found": "skills/found"} {
		meta, err := skillmeta.Encode(skill.Meta{Name: name, Description: "d", File: "SKILL.md", Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		rec.Skills[name] = &SkillRecord{Meta: meta}
	}
	found := []skill.Skill{{Name: "found", Path: "skills/found"}}
	for _, tc := range []struct {
		problem skill.Problem
		want    []string
	}{
		{skill.Problem{Level: skill.Error, Rule: "file-unreadable", Skill: "a", Path: "skills/a"}, []string{"a"}},
		{skill.Problem{Level: skill.Error, Rule: "dir-unreadable", Path: "skills/a"}, []string{"a"}},
		{skill.Problem{Level: skill.Warning, Rule: "dir-unreadable", Path: "group"}, []string{"x", "y"}},
		{skill.Problem{Level: skill.Error, Rule: "source-too-many-entries", Path: "group"}, []string{"a", "x", "y", "z"}},
		{skill.Problem{Level: skill.Warning, Rule: "file-unreadable", Skill: "a", Path: "skills/a"}, nil},
		{skill.Problem{Level: skill.Error, Rule: "frontmatter-missing", Path: "skills/a"}, nil},
		{skill.Problem{Level: skill.Warning, Rule: "dir-unreadable", Path: "skills/found"}, nil},
	} {
		if got := Held(rec, found, []skill.Problem{tc.problem}, nil); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s at %s: held %v, want %v", tc.problem.Level, tc.problem.Rule, tc.problem.Path, got, tc.want)
		}
	}
	if got := Held(nil, found, []skill.Problem{{Level: skill.Error, Rule: "source-too-many-entries"}}, nil); got != nil {
		t.Errorf("nothing recorded: held %v", got)
	}
	// x found elsewhere while the folder it was recorded in cannot be
	// read: the recorded copy may still be there, and is held.
	elsewhere := append(slices.Clone(found), skill.Skill{Name: "x", Path: "other/x"})
	if got := Held(rec, elsewhere, []skill.Problem{{Level: skill.Warning, Rule: "dir-unreadable", Path: "group"}}, nil); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("x found elsewhere: held %v, want [x y]", got)
	}
	// Found by another case of its name, it is the same skill; found at a
	// path that sorts first, the copy found wins whatever the folder holds.
	for _, tc := range []struct {
		found skill.Skill
		want  []string
	}{
		{skill.Skill{Name: "X", Path: "other/x"}, []string{"x", "y"}},
		{skill.Skill{Name: "x", Path: "a/x"}, []string{"y"}},
	} {
		got := Held(rec, append(slices.Clone(found), tc.found), []skill.Problem{{Level: skill.Warning, Rule: "dir-unreadable", Path: "group"}}, nil)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s found at %s: held %v, want %v", tc.found.Name, tc.found.Path, got, tc.want)
		}
	}
	// A skill the source's selection no longer takes is not held.
	notX := func(s skill.Skill) bool { return s.Name != "x" && s.Path != "" }
	if got := Held(rec, found, []skill.Problem{{Level: skill.Warning, Rule: "dir-unreadable", Path: "group"}}, notX); !slices.Equal(got, []string{"y"}) {
		t.Errorf("with x left out of the selection: held %v, want [y]", got)
	}
}

// TestInvalidated: a recorded skill whose new version the read found
// invalid at its recorded path is kept with that problem; not one that
// a read failure, max_source_size or max_entries left out (those are
// Held's, or the limit's), one found valid elsewhere, one at another
// path, or one the selection no longer takes. A record with no path, and
// an archived skill, are matched by name or folder name.
func TestInvalidated(t *testing.T) {
	t.Parallel()
	rec := &SourceRecord{Skills: map[string]*SkillRecord{"old": {}}, Excluded: []string{"gone"}}
	for name, dir := range map[string]string{"a": "skills/a", "b": "skills/b", "found": "skills/found"} {
		meta, err := skillmeta.Encode(skill.Meta{Name: name, Description: "d", File: "SKILL.md", Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		rec.Skills[name] = &SkillRecord{Meta: meta}
	}
	found := []skill.Skill{{Name: "Found", Path: "other/found"}}
	for _, tc := range []struct {
		problem skill.Problem
		want    []string
	}{
		{skill.Problem{Level: skill.Error, Rule: "frontmatter-yaml", Path: "skills/a", File: "skills/a/SKILL.md"}, []string{"a"}},
		{skill.Problem{Level: skill.Error, Rule: "skill-too-large", Skill: "a", Path: "skills/a"}, []string{"a"}},
		{skill.Problem{Level: skill.Error, Rule: "name-mismatch", Skill: "a2", Path: "skills/a"}, []string{"a"}},
		{skill.Problem{Level: skill.Warning, Rule: "name-mismatch", Skill: "a2", Path: "skills/a"}, nil},
		{skill.Problem{Level: skill.Error, Rule: "file-unreadable", Skill: "a", Path: "skills/a"}, nil},
		{skill.Problem{Level: skill.Error, Rule: "source-too-large", Skill: "a", Path: "skills/a"}, nil},
		{skill.Problem{Level: skill.Error, Rule: "source-too-many-entries", Path: "skills/a"}, nil},
		{skill.Problem{Level: skill.Error, Rule: "frontmatter-yaml", Path: "skills/found"}, nil},
		{skill.Problem{Level: skill.Error, Rule: "frontmatter-yaml", Path: "elsewhere/a"}, nil},
		{skill.Problem{Level: skill.Error, Rule: "frontmatter-yaml", Path: "legacy/old"}, []string{"old"}},
		{skill.Problem{Level: skill.Error, Rule: "frontmatter-yaml", Path: "skills/gone"}, []string{"gone"}},
	} {
		got := slices.Sorted(maps.Keys(Invalidated(rec, found, []skill.Problem{tc.problem}, nil)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s at %s: kept %v, want %v", tc.problem.Level, tc.problem.Rule, tc.problem.Path, got, tc.want)
		}
	}
	bad := []skill.Problem{{Level: skill.Error, Rule: "frontmatter-yaml", Path: "skills/a"}, {Level: skill.Error, Rule: "frontmatter-yaml", Path: "skills/b"}}
	notA := func(s skill.Skill) bool { return s.Name != "a" }
	if got := slices.Sorted(maps.Keys(Invalidated(rec, found, bad, notA))); !slices.Equal(got, []string{"b"}) {
		t.Errorf("with a left out of the selection: kept %v, want [b]", got)
	}
	if got := Invalidated(nil, found, bad, nil); got != nil {
		t.Errorf("nothing recorded: kept %v", got)
	}
	// Compare, as sync, keeps them: neither removed nor changed.
	if _, _, removed := Compare(context.Background(), nil, rec, bad); slices.Contains(removed, "a") || slices.Contains(removed, "b") || !slices.Contains(removed, "found") {
		t.Errorf("Compare removes %v", removed)
	}
}
