package materialize

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/skill"
)

// faultyFS fails to open one file and to read another, as a broken git
// object or a vanished local file would.
type faultyFS struct {
	fs.FS
	failOpen, failRead string
}

var errInjected = errors.New("injected fault")

func (f faultyFS) Open(name string) (fs.File, error) {
	if name == f.failOpen {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errInjected}
	}
	file, err := f.FS.Open(name)
	if err == nil && name == f.failRead {
		return failingFile{file}, nil
	}
	return file, err
}

type failingFile struct{ fs.File }

func (failingFile) Read([]byte) (int, error) { return 0, errInjected }

// brokenSkill is a skill named name whose files are files, listed as list
// (which may hold what no listing of a real FS would).
func brokenSkill(name string, fsys fs.FS, list ...string) Skill {
	s := Skill{Name: name, Files: fsys}
	for _, p := range list {
		s.List = append(s.List, skill.File{Path: p, Mode: 0o644, Size: 1})
	}
	return s
}

// unstageable returns skills that cannot be staged, each with the word its
// error must hold.
func unstageable() map[string]Skill {
	one := fstest.MapFS{"SKILL.md": {Data: []byte("s")}, "x": {Data: []byte("x")}, "x/y": {Data: []byte("y")}}
	long := strings.Repeat("a", 256)
	deep := strings.Repeat("d/", 2100) + "f"
	return map[string]Skill{
		"utf8":       brokenSkill("utf8", one, "SKILL.md", "bad\xff.md"),
		"long-name":  brokenSkill("long-name", one, "SKILL.md", long),
		"deep":       brokenSkill("deep", one, "SKILL.md", deep),
		"twice":      brokenSkill("twice", one, "SKILL.md", "x", "x"),
		"file-dir":   brokenSkill("file-dir", one, "SKILL.md", "x", "x/y"),
		"unopenable": brokenSkill("unopenable", faultyFS{FS: one, failOpen: "x"}, "SKILL.md", "x"),
		"unreadable": brokenSkill("unreadable", faultyFS{FS: one, failRead: "x"}, "SKILL.md", "x"),
	}
}

func TestOneBadSkillNeverStopsTheOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	bad := unstageable()
	// Every bad skill had a good version before, which it must keep.
	var first []Skill
	for name := range bad {
		first = append(first, mkSkill(name, map[string]string{"SKILL.md": "good " + name}))
	}
	first = append(first, mkSkill("fine", v1))
	syncOnce(t, root, "r1", first...)

	v2 := map[string]string{"SKILL.md": "v2", "ref/notes.md": "notes v2"}
	skills := []Skill{mkSkill("fine", v2), mkSkill("new", v2), brokenSkill("brand-new", fstest.MapFS{"SKILL.md": {Data: []byte("s")}}, "SKILL.md", "../escape")}
	for _, s := range bad {
		skills = append(skills, s)
	}
	c := open(t, root)
	res := c.SyncSource(ctx, Source{Name: "src", Revision: "r2", Skills: skills})
	if err := c.Commit(ctx); err != nil {
		t.Fatalf("one bad skill stopped the commit: %v", err)
	}
	c.Close()

	failed := map[string]string{}
	for _, err := range res.Errors {
		var se *SkillError
		if !errors.As(err, &se) || se.Source != "src" {
			t.Errorf("error %v does not name its source and skill", err)
			continue
		}
		failed[se.Skill] = err.Error()
	}
	want := slices.Sorted(maps.Keys(bad))
	want = append(want, "brand-new")
	slices.Sort(want)
	if got := sortedNames(failed); !slices.Equal(got, want) {
		t.Errorf("failed skills = %v, want %v (%v)", got, want, res.Errors)
	}
	if !strings.Contains(failed["unreadable"], "file x") || !strings.Contains(failed["unreadable"], errInjected.Error()) {
		t.Errorf("the read error does not name the file: %s", failed["unreadable"])
	}
	for name := range bad {
		if got := readFile(t, filepath.Join(root, "src", name, "SKILL.md")); got != "good "+name {
			t.Errorf("%s lost its last good version: %q", name, got)
		}
	}
	if readFile(t, filepath.Join(root, "src", "fine", "ref/notes.md")) != "notes v2" || readFile(t, filepath.Join(root, "src", "new", "SKILL.md")) != "v2" {
		t.Error("the good skills were not written")
	}
	if _, err := os.Lstat(filepath.Join(root, "src", "brand-new")); err == nil {
		t.Error("a skill that failed was written")
	}
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	rec := m.Sources["src"]
	if rec.Revision != "" {
		t.Error("a source with failed skills is recorded as at its revision")
	}
	for name := range bad {
		if rec.Skills[name] == nil || len(rec.Skills[name].Files()) != 1 {
			t.Errorf("%s: the manifest lost its last good record: %+v", name, rec.Skills[name])
		}
	}
	if rec.Skills["brand-new"] != nil || rec.Skills["new"] == nil {
		t.Errorf("manifest skills: %v", sortedNames(rec.Skills))
	}
	if diffs := verifyCache(t, root); len(diffs) != 0 {
		t.Errorf("the manifest does not say what is on disk: %v", diffs)
	}
}

func TestOneBadSkillNeverStopsATarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	bad := unstageable()
	var first, next []TargetSkill
	for name, s := range bad {
		first = append(first, TargetSkill{Skill: mkSkill(name, map[string]string{"SKILL.md": "good " + name})})
		next = append(next, TargetSkill{Skill: s})
	}
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: first}); err != nil {
		t.Fatal(err)
	}
	next = append(next, TargetSkill{Skill: mkSkill("fine", v1)})
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: next})
	if err != nil {
		t.Fatalf("one bad skill stopped the target: %v", err)
	}
	if len(rep.Errors) != len(bad) {
		t.Errorf("errors = %q, want one per bad skill", rep.Errors)
	}
	for name := range bad {
		if got := readFile(t, filepath.Join(dir, name, "SKILL.md")); got != "good "+name {
			t.Errorf("%s lost its last good version: %q", name, got)
		}
	}
	if readFile(t, filepath.Join(dir, "fine", "ref/notes.md")) != v1["ref/notes.md"] {
		t.Error("the good skill was not placed")
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("the record does not say what is on disk: %v %v", diffs, err)
	}
}
