package materialize

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// onePreserved checks that rep kept exactly one copy of name and returns
// its path.
func onePreserved(t *testing.T, rep TargetReport, dir, name string) string {
	t.Helper()
	if len(rep.Preserved) != 1 {
		t.Fatalf("preserved = %v, want one copy of %s", rep.Preserved, name)
	}
	p := rep.Preserved[0]
	if filepath.Dir(p) != filepath.Join(dir, ConflictsName) || !strings.HasPrefix(filepath.Base(p), name+"-") {
		t.Errorf("%s was kept as %s", name, p)
	}
	return p
}

func TestEditedTargetCopyIsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	sync := copySkillA(t, dir)
	sync(v1)
	if rep := sync(v1); len(rep.Preserved) != 0 {
		t.Errorf("an untouched copy was kept: %v", rep.Preserved)
	}
	if _, err := os.Lstat(filepath.Join(dir, ConflictsName)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a no-op sync made the conflicts folder")
	}

	// The user edits a file; a new version arrives.
	write(t, filepath.Join(dir, "a", "ref/notes.md"), "my own notes, longer than before")
	v2 := map[string]string{"SKILL.md": v1["SKILL.md"], "scripts/run.sh": v1["scripts/run.sh"], "ref/notes.md": "notes v2"}
	rep := sync(v2)
	kept := onePreserved(t, rep, dir, "a")
	if readFile(t, filepath.Join(kept, "ref/notes.md")) != "my own notes, longer than before" {
		t.Error("the kept copy lost the user's edit")
	}
	if readFile(t, filepath.Join(dir, "a", "ref/notes.md")) != "notes v2" {
		t.Error("the new version was not written")
	}
	// The kept copy shares nothing with the new one: an edit of one must
	// not show in the other.
	if os.SameFile(statOf(t, filepath.Join(kept, "SKILL.md")), statOf(t, filepath.Join(dir, "a", "SKILL.md"))) {
		t.Error("the kept copy and the new version share an inode")
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}

	// An added file is an edit too, found when the copy is about to be
	// rewritten: the same version again repairs it and keeps the edit.
	write(t, filepath.Join(dir, "a", "mine.md"), "added by the user")
	write(t, filepath.Join(dir, "a", "SKILL.md"), "rewritten by the user")
	rep = sync(v2)
	kept = onePreserved(t, rep, dir, "a")
	if readFile(t, filepath.Join(kept, "mine.md")) != "added by the user" || readFile(t, filepath.Join(dir, "a", "SKILL.md")) != v1["SKILL.md"] {
		t.Error("the edited copy was not kept whole, or the skill not repaired")
	}
	if _, err := os.Lstat(filepath.Join(dir, "a", "mine.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the user's file stayed in the new version")
	}

	// A removed skill whose copy was edited is kept, not deleted.
	write(t, filepath.Join(dir, "a", "SKILL.md"), "edited again")
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy})
	if err != nil || rep.Removed != len(v1) { // files, as Written counts
		t.Fatalf("removal: %+v %v", rep, err)
	}
	kept = onePreserved(t, rep, dir, "a")
	if readFile(t, filepath.Join(kept, "SKILL.md")) != "edited again" {
		t.Error("the edited copy of a removed skill was lost")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ConflictsName))
	if len(entries) != 3 {
		t.Errorf("kept copies: %v", entries)
	}
}

func statOf(t *testing.T, p string) os.FileInfo {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestEditedLinkIsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	from1, from2 := t.TempDir(), t.TempDir()
	link := func(to string) TargetReport {
		t.Helper()
		rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Symlink, Skills: []TargetSkill{{Skill: mkSkill("a", v1), Dir: to}}})
		if err != nil || len(rep.Errors) > 0 {
			t.Fatalf("sync target: %v %v", err, rep.Errors)
		}
		return rep
	}
	link(from1)
	if rep := link(from2); len(rep.Preserved) != 0 {
		t.Errorf("a link skillsync made was kept: %v", rep.Preserved)
	}
	// The user replaces the link with a folder of their own.
	live := filepath.Join(dir, "a")
	if err := os.Remove(live); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(live, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(live, "SKILL.md"), "mine")
	kept := onePreserved(t, link(from1), dir, "a")
	if readFile(t, filepath.Join(kept, "SKILL.md")) != "mine" {
		t.Error("the user's folder was lost")
	}
	if got, err := os.Readlink(live); err != nil || got != from1 {
		t.Errorf("the link was not made: %q %v", got, err)
	}
}

func TestTargetsKeepWhatTheCallerCannotProvide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	a, b := mkSkill("a", v1), mkSkill("b", v1)
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{{Skill: a}, {Skill: b}}}); err != nil {
		t.Fatal(err)
	}
	rec, err := LoadTargetRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := stat(t, filepath.Join(dir, "a", "SKILL.md"))

	// b's source failed: the caller names it in Keep. a comes with its
	// hash and files nobody can read: nothing of it needs reading.
	unreadable := a
	unreadable.Files = faultyFS{FS: fstest.MapFS{}, failOpen: "SKILL.md"}
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Keep: []string{"b"},
		Skills: []TargetSkill{{Skill: unreadable, Hash: rec.Skills["a"].Hash}}})
	if err != nil || len(rep.Errors) > 0 || rep.Removed != 0 || rep.Written != 0 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	if readFile(t, filepath.Join(dir, "b", "ref/notes.md")) != v1["ref/notes.md"] {
		t.Error("a skill in Keep was removed")
	}
	if stat(t, filepath.Join(dir, "a", "SKILL.md")) != before {
		t.Error("an unchanged skill was rewritten")
	}
	after, err := LoadTargetRecord(dir)
	if err != nil || after.Skills["b"] == nil || after.Skills["a"] == nil {
		t.Errorf("record after: %+v %v", after, err)
	}
}

// copySkillA returns a function that syncs skill "a", with the files it
// is given, into the Copy target dir, failing the test on any error.
func copySkillA(t *testing.T, dir string) func(files map[string]string) TargetReport {
	return func(files map[string]string) TargetReport {
		t.Helper()
		rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{{Skill: mkSkill("a", files)}}})
		if err != nil || len(rep.Errors) > 0 {
			t.Fatalf("sync target: %+v %v", rep, err)
		}
		return rep
	}
}

// An edit that leaves a file's size and modification time as they were
// (a tool that restores times, a coarse clock) is an edit all the same:
// the copy is kept before a new version replaces it, and before a
// removal. The record's stat data says nothing here; the content does.
func TestEditKeepingSizeAndTimeIsKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sync := copySkillA(t, dir)
	sync(v1)
	sameStat := func(content string) {
		t.Helper()
		p := filepath.Join(dir, "a", "ref/notes.md")
		before := statOf(t, p)
		write(t, p, content)
		if err := os.Chtimes(p, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		if after := statOf(t, p); after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("the edit changed the file's stat data: %v %v", after.Size(), after.ModTime())
		}
	}

	sameStat("notes V1") // as long as "notes v1"
	v2 := map[string]string{"SKILL.md": v1["SKILL.md"], "scripts/run.sh": v1["scripts/run.sh"], "ref/notes.md": "notes v2"}
	kept := onePreserved(t, sync(v2), dir, "a")
	if readFile(t, filepath.Join(kept, "ref/notes.md")) != "notes V1" {
		t.Error("the kept copy lost the user's edit")
	}

	sameStat("notes V2")
	rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy})
	if err != nil {
		t.Fatal(err)
	}
	if kept := onePreserved(t, rep, dir, "a"); readFile(t, filepath.Join(kept, "ref/notes.md")) != "notes V2" {
		t.Error("the edited copy of a removed skill was lost")
	}
}

// A copy that only lacks files skillsync wrote holds nothing of the
// user's: the files left are skillsync's own, so nothing is moved to
// .skillsync-conflicts (where an empty folder would wait for a person,
// warned of as "edited"). A sync that hashes the target (verify
// --repair) writes the missing file back, a new version replaces the
// copy, and a removal removes it; a copy that lacks a file and has
// another changed is still kept.
func TestCopyOnlyLackingFilesIsNotKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sync := copySkillA(t, dir)
	sync(v1)
	gone := func(rel string) {
		t.Helper()
		if err := os.Remove(filepath.Join(dir, "a", filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	none := func(what string, rep TargetReport) {
		t.Helper()
		if len(rep.Preserved) != 0 || len(rep.Warnings) != 0 {
			t.Errorf("%s: preserved %v, warnings %v", what, rep.Preserved, rep.Warnings)
		}
		if _, err := os.Lstat(filepath.Join(dir, ConflictsName)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: made %s", what, ConflictsName)
		}
	}

	gone("scripts/run.sh")
	rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy, Check: CheckHash, Skills: []TargetSkill{{Skill: mkSkill("a", v1)}}})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	none("repair", rep)
	if readFile(t, filepath.Join(dir, "a", "scripts/run.sh")) != v1["scripts/run.sh"] {
		t.Error("the missing file was not written back")
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("verify after the repair: %v %v", diffs, err)
	}

	gone("ref/notes.md")
	gone("SKILL.md")
	v2 := map[string]string{"SKILL.md": v1["SKILL.md"], "scripts/run.sh": v1["scripts/run.sh"], "ref/notes.md": "notes v2"}
	none("a new version", sync(v2))
	if readFile(t, filepath.Join(dir, "a", "ref/notes.md")) != "notes v2" || readFile(t, filepath.Join(dir, "a", "SKILL.md")) != v1["SKILL.md"] {
		t.Error("the new version was not written whole")
	}

	gone("ref/notes.md")
	rep, err = SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("removal: %+v %v", rep, err)
	}
	none("a removal", rep)
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the copy of a removed skill stayed: %v", err)
	}

	// A file gone beside a file changed: the change is the user's.
	sync(v1)
	gone("scripts/run.sh")
	write(t, filepath.Join(dir, "a", "ref/notes.md"), "mine")
	if kept := onePreserved(t, sync(v2), dir, "a"); readFile(t, filepath.Join(kept, "ref/notes.md")) != "mine" {
		t.Error("the kept copy lost the user's edit")
	}
}
