package materialize

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skillhash"
	"github.com/skillsync/skillsync/skill"
)

// mkSkill builds a Skill from path → content; modes 0755 for names
// ending in .sh.
func mkSkill(name string, files map[string]string) Skill {
	fsys := fstest.MapFS{}
	for p, data := range files {
		mode := fs.FileMode(0o644)
		if filepath.Ext(p) == ".sh" {
			mode = 0o755
		}
		fsys[p] = &fstest.MapFile{Data: []byte(data), Mode: mode}
	}
	list, _ := skill.ListFiles(fsys, name, 0)
	return Skill{Name: name, Files: fsys, List: list}
}

func open(t *testing.T, root string) *Cache {
	t.Helper()
	c, err := OpenCache(context.Background(), root, time.Second, CheckRecord)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// syncOnce runs one sync of source with skills and commits it.
func syncOnce(t *testing.T, root, rev string, skills ...Skill) ([]Change, Stats) {
	t.Helper()
	c := open(t, root)
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: rev, Skills: skills})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	c.Close()
	return res.Changes, st
}

type stamp struct {
	ino   uint64
	mtime int64
}

func stat(t *testing.T, p string) stamp {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	_, ino, _ := platform.FileKey(info)
	return stamp{ino, info.ModTime().UnixNano()}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var v1 = map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "scripts/run.sh": "#!/bin/sh\n", "ref/notes.md": "notes v1"}

func TestUnchangedFilesAreNeverRewritten(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	dir := filepath.Join(root, "src", "a")
	before := map[string]stamp{}
	for p := range v1 {
		before[p] = stat(t, filepath.Join(dir, p))
	}
	manifest := stat(t, filepath.Join(root, manifestName))

	// Same revision: the fast path reads nothing and writes nothing.
	c := open(t, root)
	if !c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Fatal("an untouched cache is not current")
	}
	c.Close()

	// A new revision with the same content: hashed, nothing written.
	changes, st := syncOnce(t, root, "r2", mkSkill("a", v1))
	if len(changes) != 0 || st.Written != 0 || st.Unchanged != 3 {
		t.Errorf("same content: changes %v, stats %+v", changes, st)
	}
	for p, s := range before {
		if got := stat(t, filepath.Join(dir, p)); got != s {
			t.Errorf("%s was rewritten: %+v -> %+v", p, s, got)
		}
	}

	// One file changes: one file is written, the others keep inode and mtime.
	v2 := map[string]string{}
	for k, v := range v1 {
		v2[k] = v
	}
	v2["ref/notes.md"] = "notes v2"
	changes, st = syncOnce(t, root, "r3", mkSkill("a", v2))
	if len(changes) != 1 || changes[0].Op != "updated" || st.Written != 1 || st.BytesWritten != int64(len("notes v2")) {
		t.Errorf("one-file change: changes %v, stats %+v", changes, st)
	}
	for p, s := range before {
		got := stat(t, filepath.Join(dir, p))
		if (got == s) == (p == "ref/notes.md") {
			t.Errorf("%s: before %+v after %+v", p, s, got)
		}
	}
	if readFile(t, filepath.Join(dir, "ref/notes.md")) != "notes v2" {
		t.Error("the changed file has old content")
	}
	info, _ := os.Stat(filepath.Join(dir, "scripts/run.sh"))
	if info.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode %v", info.Mode())
	}
	if stat(t, filepath.Join(root, manifestName)) == manifest {
		t.Error("the manifest was not updated")
	}
}

func TestOrphansAreRemoved(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1), mkSkill("b", map[string]string{"SKILL.md": "b", "old.md": "x"}))
	changes, st := syncOnce(t, root, "r2", mkSkill("b", map[string]string{"SKILL.md": "b"}))
	ops := map[string]string{}
	for _, c := range changes {
		ops[c.Name] = string(c.Op)
	}
	if ops["a"] != "removed" || ops["b"] != "updated" || st.Removed != 3 {
		t.Errorf("changes %v stats %+v", changes, st)
	}
	if _, err := os.Stat(filepath.Join(root, "src", "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a skill gone from the source is still cached")
	}
	if _, err := os.Stat(filepath.Join(root, "src", "b", "old.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a file gone from the skill is still cached")
	}

	// A source gone from the config is removed; a foreign entry stays.
	if err := os.WriteFile(filepath.Join(root, "mine.txt"), []byte("user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := open(t, root)
	pruned := c.Prune(nil)
	if len(pruned.Errors) > 0 || len(pruned.Changes) != 1 || pruned.Changes[0].Name != "b" {
		t.Errorf("prune: %+v", pruned)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "src")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a source gone from the config is still cached")
	}
	if readFile(t, filepath.Join(root, "mine.txt")) != "user's" || !slices.ContainsFunc(pruned.Warnings, func(w string) bool { return strings.Contains(w, "mine.txt") }) {
		t.Errorf("a foreign entry was touched or not reported: %v", pruned.Warnings)
	}
}

func TestSymlinksInTheCacheAreNeverFollowed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The skill directory is a link out of the cache.
	if err := os.Symlink(outside, filepath.Join(root, "src", "a")); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, root, "r1", mkSkill("a", v1))
	if readFile(t, filepath.Join(outside, "SKILL.md")) != "outside" {
		t.Fatal("a file outside the cache was written")
	}
	if info, _ := os.Lstat(filepath.Join(root, "src", "a")); !info.IsDir() {
		t.Error("the link was not replaced by a directory")
	}
	// Now the source folder itself is a link, and a skill must be removed.
	if err := os.RemoveAll(filepath.Join(root, "src")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "src")); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, root, "r2", mkSkill("b", v1))
	if readFile(t, filepath.Join(outside, "SKILL.md")) != "outside" {
		t.Fatal("a file outside the cache was touched through a linked source folder")
	}
}

func TestFileAndDirectorySwapPlaces(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", map[string]string{"SKILL.md": "s", "x": "file", "y/z": "in dir"}))
	syncOnce(t, root, "r2", mkSkill("a", map[string]string{"SKILL.md": "s", "x/inner": "now a dir", "y": "now a file"}))
	dir := filepath.Join(root, "src", "a")
	if readFile(t, filepath.Join(dir, "x", "inner")) != "now a dir" || readFile(t, filepath.Join(dir, "y")) != "now a file" {
		t.Error("a file and a directory did not swap places")
	}
}

func TestLockContention(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := open(t, root)
	_, err := OpenCache(context.Background(), root, 50*time.Millisecond, CheckRecord)
	var held *flock.HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("second open = %v, want a HeldError naming this process", err)
	}
	c.Close()
}

// verifyCache reads root's manifest and verifies the cache against it.
func verifyCache(t *testing.T, root string) []Difference {
	t.Helper()
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	return VerifyCache(root, m)
}

func TestVerifyAndRepair(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	dir := filepath.Join(root, "src", "a")
	if diffs := verifyCache(t, root); len(diffs) != 0 {
		t.Fatalf("a fresh cache: %v", diffs)
	}
	// Same size and restored mtime: only hashing finds it.
	p := filepath.Join(dir, "ref/notes.md")
	info, _ := os.Stat(p)
	if err := os.WriteFile(p, []byte("NOTES v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "scripts/run.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extra.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	diffs := verifyCache(t, root)
	kinds := map[string]string{}
	for _, d := range diffs {
		rel, _ := filepath.Rel(dir, d.Path)
		kinds[rel] = string(d.Kind)
	}
	want := map[string]string{"ref/notes.md": "modified", "scripts/run.sh": "missing", "extra.txt": "extra"}
	if len(kinds) != 3 || kinds["ref/notes.md"] != want["ref/notes.md"] || kinds["scripts/run.sh"] != "missing" || kinds["extra.txt"] != "extra" {
		t.Errorf("differences = %v, want %v", kinds, want)
	}
	c, err := OpenCache(context.Background(), root, time.Second, CheckHash)
	if err != nil {
		t.Fatal(err)
	}
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Skills: []Skill{mkSkill("a", v1)}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if diffs := verifyCache(t, root); len(diffs) != 0 {
		t.Errorf("after repair: %v", diffs)
	}
}

func TestGuessModes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := mkSkill("a", map[string]string{"SKILL.md": "s", "tool": "#!/usr/bin/env python3\n", "data.sh": "not a script"})
	s.GuessModes = true
	syncOnce(t, root, "r1", s)
	for name, want := range map[string]fs.FileMode{"tool": 0o755, "data.sh": 0o644, "SKILL.md": 0o644} {
		info, _ := os.Stat(filepath.Join(root, "src", "a", name))
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, info.Mode().Perm(), want)
		}
	}
}

func TestTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine", "SKILL.md"), []byte("the user's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	skills := []TargetSkill{{Skill: mkSkill("a", v1)}, {Skill: mkSkill("mine", v1)}}
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Conflicts, []string{"mine"}) || readFile(t, filepath.Join(dir, "mine", "SKILL.md")) != "the user's own" {
		t.Errorf("the user's directory: conflicts %v", rep.Conflicts)
	}
	before := stat(t, filepath.Join(dir, "a", "SKILL.md"))
	if rep, _ = SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills}); rep.Written != 0 || stat(t, filepath.Join(dir, "a", "SKILL.md")) != before {
		t.Errorf("an unchanged target was rewritten: %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, targetStaging)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the staging folder was left in the target")
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("verify target: %v %v", diffs, err)
	}
	// Symlink mode, then the winner disappears.
	linkTo := t.TempDir()
	skills = []TargetSkill{{Skill: mkSkill("a", v1), Dir: linkTo}}
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Symlink, Skills: skills}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(dir, "a")); err != nil || got != linkTo {
		t.Errorf("symlink mode: %q %v", got, err)
	}
	rep, err = SyncTarget(ctx, Target{Dir: dir, Mode: Symlink})
	if err != nil || rep.Removed != 1 {
		t.Fatalf("removal: %+v %v", rep, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a vanished winner is still in the target")
	}
	if _, err := os.Stat(linkTo); err != nil {
		t.Error("removing the link removed its target")
	}
	if readFile(t, filepath.Join(dir, "mine", "SKILL.md")) != "the user's own" {
		t.Error("the user's directory was touched")
	}
}

// addContent adds to h a file whose content the test holds.
func addContent(h *skillhash.Hasher, path string, content []byte) {
	h.Add(path, int64(len(content)), sha256.Sum256(content))
}

// TestSourceFolderRemovedIsBuiltAgain: a source's cache folder removed by
// hand is not current, whatever its record says, and its skills are
// written again. Trusted, the record kept every sync a no-op: the read
// commands said "run skillsync sync", and neither that nor a daemon's
// syncs (95 of every 96 trust records) brought the folder back.
func TestSourceFolderRemovedIsBuiltAgain(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	// A git source's skill has a fingerprint (its tree's hash).
	a := mkSkill("a", v1)
	a.Fingerprint = "tree-a"
	syncOnce(t, root, "r1", a)
	if err := os.RemoveAll(filepath.Join(root, "src")); err != nil {
		t.Fatal(err)
	}
	c := open(t, root)
	if c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Error("a source whose folder is gone is current")
	}
	c.Close()
	syncOnce(t, root, "r1", a)
	if got := readFile(t, filepath.Join(root, "src", "a", "ref", "notes.md")); got != "notes v1" {
		t.Errorf("after the sync: notes.md %q", got)
	}
}

// TestTargetConflictStanding: a user's own folder where a skill would go
// is a conflict at every sync while it stands, but only the first sync
// that meets it finds it new (Standing counts the rest): the daemon
// counts each conflict once.
func TestTargetConflictStanding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	mine := func(name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte("the user's own"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mine("mine")
	skills := []TargetSkill{{Skill: mkSkill("a", v1)}, {Skill: mkSkill("mine", v1)}}
	for i, want := range []struct {
		conflicts []string
		standing  int
		before    func()
	}{
		{[]string{"mine"}, 0, nil},
		{[]string{"mine"}, 1, nil},
		{[]string{"mine", "other"}, 1, func() {
			mine("other")
			skills = append(skills, TargetSkill{Skill: mkSkill("other", v1)})
		}},
		{[]string{"other"}, 1, func() {
			if err := os.RemoveAll(filepath.Join(dir, "mine")); err != nil {
				t.Fatal(err)
			}
		}},
		{nil, 0, func() {
			if err := os.RemoveAll(filepath.Join(dir, "other")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		if want.before != nil {
			want.before()
		}
		rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills})
		if err != nil || !slices.Equal(rep.Conflicts, want.conflicts) && len(rep.Conflicts)+len(want.conflicts) > 0 || rep.Standing != want.standing {
			t.Errorf("sync %d: conflicts %v standing %d (%v), want %v and %d", i+1, rep.Conflicts, rep.Standing, err, want.conflicts, want.standing)
		}
	}
}
