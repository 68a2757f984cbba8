package materialize

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

func TestExcludedOfAndBrought(t *testing.T) {
	t.Parallel()
	var none *SourceRecord
	if none.ExcludedOf(map[string]bool{"a": true}) != nil || none.Brought([]Change{{Name: "a"}}) != 0 {
		t.Error("a source the cache does not hold excludes or brought something")
	}
	rec := &SourceRecord{Excluded: []string{"old"}, Skills: map[string]*SkillRecord{
		"pdf": {files: map[string]FileRecord{"SKILL.md": {Size: 10}, "ref.md": {Size: 5}}},
		"doc": {files: map[string]FileRecord{"SKILL.md": {Size: 7}}},
	}}
	if got := rec.ExcludedOf(map[string]bool{"pdf": true, "old": true, "never": true}); !slices.Equal(got, []string{"old", "pdf"}) {
		t.Errorf("excluded %v, want old and pdf", got)
	}
	if got := rec.Brought([]Change{{Name: "pdf", Op: Added}, {Name: "doc", Op: Removed}, {Name: "gone", Op: Updated}}); got != 15 {
		t.Errorf("brought %d bytes, want 15", got)
	}
}

// Known reads no file records until it is first asked (a sync whose
// sources did not change asks nothing), and may then be asked from
// several goroutines at once.
func TestKnownLoadsAtTheFirstQuestion(t *testing.T) {
	t.Parallel()
	rec := &SourceRecord{Discovery: "d", Skills: map[string]*SkillRecord{}}
	c := &Cache{root: t.TempDir(), manifest: &Manifest{Sources: map[string]*SourceRecord{"s": rec}}}
	known, _ := c.Known("s", "d")
	if rec.filesLoaded || rec.filesLost {
		t.Fatal("Known read the file records before any question")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, ok := known("tree:abc"); ok {
				t.Error("an unknown tree is known")
			}
		})
	}
	wg.Wait()
	if !rec.filesLoaded && !rec.filesLost {
		t.Error("the first question did not read the file records")
	}
}

// A skill record read from the file records answers Known with its
// listing, in path order, without its files being decoded into a map;
// Files, asked from several goroutines at once, decodes them once.
func TestKnownListsARecordWithoutDecodingItsFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fsys := fstest.MapFS{
		"SKILL.md": {Data: []byte("---\nname: pdf\ndescription: d\n---\n"), Mode: 0o644},
		"b/run.sh": {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		"a.md":     {Data: []byte("aa"), Mode: 0o644},
	}
	s := FromSkills([]skill.Skill{{Name: "pdf", Description: "d", Path: "pdf", File: "SKILL.md", Files: fsys}}, false)[0]
	s.Fingerprint = "git-tree:abc"
	c := open(t, root)
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Discovery: "d", Skills: []Skill{s}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()

	c = open(t, root)
	known, knows := c.Known("src", "d")
	if !knows("tree:abc") || knows("tree:abd") || knows("abc") {
		t.Error("Knows does not say what the records hold")
	}
	_, listing, ok := known("tree:abc")
	want := []skill.File{{Path: "SKILL.md", Size: 33, Mode: 0o644}, {Path: "a.md", Size: 2, Mode: 0o644}, {Path: "b/run.sh", Size: 10, Mode: 0o755}}
	if !ok || !slices.Equal(listing, want) {
		t.Fatalf("Known = %v %v, want %v", listing, ok, want)
	}
	var opts repository.Options
	c.Answer(&opts, "src", "d")
	if opts.Known == nil || opts.Knows == nil || opts.Expect != 1 {
		t.Errorf("Answer set Known %v, Knows %v, Expect %d; want both and 1", opts.Known != nil, opts.Knows != nil, opts.Expect)
	}
	rec := c.Manifest().Sources["src"].Skills["pdf"]
	if rec.files != nil {
		t.Error("Known decoded the record's files into a map")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			files := rec.Files()
			if len(files) != 3 || files["b/run.sh"].Perm() != 0o755 || files["a.md"].Size != 2 {
				t.Errorf("Files = %v", files)
			}
		})
	}
	wg.Wait()
	if rec.fileCount() != 3 {
		t.Errorf("fileCount = %d, want 3", rec.fileCount())
	}
}

// Answer's Recalled gives a skill's frontmatter and the git tree it was
// read from, by name, from the records a sync with the same discovery
// settings wrote; nothing for another discovery, an unknown name, or a
// skill whose folder was not a git tree.
func TestRecalledFromTheRecords(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mk := func(name, key string) Skill {
		fsys := fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: " + name + "\ndescription: d\n---\n"), Mode: 0o644}}
		s := FromSkills([]skill.Skill{{Name: name, Description: "About " + name + ".", Path: "skills/" + name, File: "SKILL.md", Files: fsys}}, false)[0]
		s.Fingerprint = key
		return s
	}
	c := open(t, root)
	src := Source{Name: "src", Revision: "r1", Discovery: "d", Skills: []Skill{mk("pdf", "git-tree:abc"), mk("local", "dir:local")}}
	if res := c.SyncSource(context.Background(), src); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()

	c = open(t, root)
	var opts repository.Options
	c.Answer(&opts, "src", "d")
	if opts.Recalled == nil {
		t.Fatal("Answer set no Recalled")
	}
	meta, key, ok := opts.Recalled("pdf")
	if !ok || key != "git-tree:abc" || meta.Name != "pdf" || meta.Description != "About pdf." || meta.Path != "skills/pdf" || meta.File != "SKILL.md" {
		t.Errorf("Recalled(pdf) = %+v %q %v", meta, key, ok)
	}
	for _, name := range []string{"local", "gone", ""} {
		if _, _, ok := opts.Recalled(name); ok {
			t.Errorf("Recalled(%q) answers", name)
		}
	}
	var other repository.Options
	c.Answer(&other, "src", "another discovery")
	if other.Recalled != nil {
		if _, _, ok := other.Recalled("pdf"); ok {
			t.Error("Recalled answers for a source read under other discovery settings")
		}
	}
	var none repository.Options
	c.Answer(&none, "unsynced", "d")
	if none.Recalled != nil {
		t.Error("Answer set Recalled for a source the cache does not hold")
	}
}

// A record that a sync under other discovery settings could not replace
// (the skill's new version failed to stage) is kept, with its hash and
// frontmatter, but answers neither Known nor Recalled under the new
// settings, which never found it: Strict, turned on, would otherwise see
// a skill it refuses taken as valid.
func TestARecordKeptAcrossSettingsAnswersNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	fsys := fstest.MapFS{
		"SKILL.md": {Data: []byte("---\nname: pdf\ndescription: d\n---\n"), Mode: 0o644},
		"a.md":     {Data: []byte("a"), Mode: 0o644},
	}
	s := FromSkills([]skill.Skill{{Name: "pdf", Description: "d", Path: "pdf", File: "SKILL.md", Files: fsys}}, false)[0]
	s.Fingerprint = "git-tree:abc"
	commit := func(src Source, wantErrors bool) {
		t.Helper()
		c := open(t, root)
		res := c.SyncSource(ctx, src)
		if got := len(res.Errors) > 0; got != wantErrors {
			t.Fatalf("sync under %s: errors %v", src.Discovery, res.Errors)
		}
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	commit(Source{Name: "src", Revision: "r1", Discovery: "d1", Skills: []Skill{s}}, false)
	c := open(t, root)
	first := c.Manifest().Sources["src"].Skills["pdf"]
	c.Close()

	broken := s
	broken.Files, broken.Fingerprint = faultyFS{FS: fsys, failOpen: "a.md"}, "git-tree:abd"
	commit(Source{Name: "src", Revision: "r2", Discovery: "d2", Skills: []Skill{broken}}, true)

	c = open(t, root)
	kept := c.Manifest().Sources["src"].Skills["pdf"]
	if kept == nil || kept.Hash != first.Hash || string(kept.Meta) != string(first.Meta) {
		t.Fatalf("the record the failed sync kept: %+v, want the first one's hash and frontmatter", kept)
	}
	var opts repository.Options
	c.Answer(&opts, "src", "d2")
	if _, _, ok := opts.Known("tree:abc"); ok {
		t.Error("Known answers under d2 with what d1 found")
	}
	if _, _, ok := opts.Recalled("pdf"); ok {
		t.Error("Recalled answers under d2 with what d1 found")
	}
}
