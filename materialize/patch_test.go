package materialize

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/skill"
)

// liveAndVerified checks that the live copy at dir holds want and that
// the cache at root verifies.
func liveAndVerified(t *testing.T, root, dir string, want map[string]string) {
	t.Helper()
	if got, _ := tree(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("live holds %v, want %v", got, want)
	}
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Errorf("verify: %v", diffs)
	}
}

// tree returns the files (path -> content) and folders of dir.
func tree(t *testing.T, dir string) (map[string]string, []string) {
	t.Helper()
	files := map[string]string{}
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			dirs = append(dirs, filepath.ToSlash(rel))
			return nil
		}
		files[filepath.ToSlash(rel)] = readFile(t, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, dirs
}

// stagedFolders lists the folders a cache's staging holds: the versions
// its syncs swapped out.
func stagedFolders(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, e := range entries(t, filepath.Join(root, stagingName)) {
		if info, err := os.Lstat(filepath.Join(root, stagingName, e)); err == nil && info.IsDir() {
			out = append(out, e)
		}
	}
	return out
}

// TestOneChangedFileIsPatched: a new version that differs from the live
// one by one file is put in place by that file alone (the skill's
// folders and other files untouched, nothing swapped out); two changes,
// a new folder or a folder left empty build the skill whole. Either way
// the live copy, its record and its hash are the new version's.
func TestOneChangedFileIsPatched(t *testing.T) {
	t.Parallel()
	base := map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "scripts/run.sh": "#!/bin/sh\n",
		"ref/notes.md": "notes v1", "ref/more.md": "more", "ref/deep/x.md": "x"}
	with := func(change func(m map[string]string)) map[string]string {
		m := maps.Clone(base)
		change(m)
		return m
	}
	for _, tt := range []struct {
		name    string
		want    map[string]string
		patched bool
	}{
		{"edited", with(func(m map[string]string) { m["ref/notes.md"] = "notes v2, longer" }), true},
		{"same size", with(func(m map[string]string) { m["ref/notes.md"] = "notes v2" }), true},
		{"added to a folder", with(func(m map[string]string) { m["ref/deep/y.md"] = "y" }), true},
		{"added at the top", with(func(m map[string]string) { m["README.md"] = "r" }), true},
		{"removed, its folder kept", with(func(m map[string]string) { delete(m, "ref/more.md") }), true},
		{"added to a new folder", with(func(m map[string]string) { m["new/y.md"] = "y" }), false},
		{"removed, its folder left empty", with(func(m map[string]string) { delete(m, "ref/deep/x.md") }), false},
		{"two edited", with(func(m map[string]string) { m["ref/notes.md"] = "v2"; m["SKILL.md"] += "# v2\n" }), false},
		{"edited and added", with(func(m map[string]string) { m["ref/notes.md"] = "v2"; m["ref/z.md"] = "z" }), false},
		{"edited and removed", with(func(m map[string]string) { m["ref/notes.md"] = "v2"; delete(m, "ref/more.md") }), false},
		{"added and removed", with(func(m map[string]string) { m["ref/z.md"] = "z"; delete(m, "ref/more.md") }), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			syncOnce(t, root, "r1", mkSkill("a", base))
			live := filepath.Join(root, "src", "a")
			folder, ref := stat(t, live).ino, stat(t, filepath.Join(live, "ref")).ino
			before := map[string]stamp{}
			for p := range base {
				before[p] = stat(t, filepath.Join(live, p))
			}
			changes, st := syncOnce(t, root, "r2", mkSkill("a", tt.want))
			if len(changes) != 1 || changes[0].Op != Updated {
				t.Fatalf("changes %v", changes)
			}
			files, _ := tree(t, live)
			if !reflect.DeepEqual(files, tt.want) {
				t.Errorf("live holds %v, want %v", files, tt.want)
			}
			if (stat(t, live).ino == folder) != tt.patched || (stat(t, filepath.Join(live, "ref")).ino == ref) != tt.patched {
				t.Errorf("patched %v: the skill's folders were kept: %v", tt.patched, !tt.patched)
			}
			if got := len(stagedFolders(t, root)); got != map[bool]int{true: 0, false: 1}[tt.patched] {
				t.Errorf("patched %v: staging holds %d folders", tt.patched, got)
			}
			// Every file the new version did not change keeps its inode
			// and mtime, patched or built.
			kept := 0
			for p, s := range before {
				if v, ok := tt.want[p]; ok && v == base[p] {
					kept++
					if got := stat(t, filepath.Join(live, p)); got != s {
						t.Errorf("unchanged %s was rewritten", p)
					}
				}
			}
			if st.Unchanged != kept || st.Written != len(tt.want)-kept {
				t.Errorf("stats %+v, want %d unchanged and %d written", st, kept, len(tt.want)-kept)
			}
			if diffs := verifyCache(t, root); len(diffs) > 0 {
				t.Errorf("verify: %v", diffs)
			}
			m, err := ReadManifest(root)
			if err != nil {
				t.Fatal(err)
			}
			sk := mkSkill("a", tt.want)
			if h, err := SkillHash(context.Background(), sk.Files, sk.List); err != nil || m.Sources["src"].Skills["a"].Hash != h || changes[0].After != h {
				t.Errorf("recorded hash %v, change %v, want %v (%v)", m.Sources["src"].Skills["a"].Hash, changes[0].After, h, err)
			}
			// And back: the old version again, by the same rule.
			syncOnce(t, root, "r3", mkSkill("a", base))
			if files, _ := tree(t, live); !reflect.DeepEqual(files, base) {
				t.Errorf("back: live holds %v", files)
			}
			if diffs := verifyCache(t, root); len(diffs) > 0 {
				t.Errorf("back: verify: %v", diffs)
			}
		})
	}
}

// TestAModeChangeIsPatched: a file whose mode alone changes is written
// again with its new mode.
func TestAModeChangeIsPatched(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	skillWith := func(mode fs.FileMode) Skill {
		fsys := fstest.MapFS{"SKILL.md": {Data: []byte("s"), Mode: 0o644}, "run.sh": {Data: []byte("#!/bin/sh\n"), Mode: mode}}
		list, _ := skill.ListFiles(fsys, "a", 0)
		return Skill{Name: "a", Files: fsys, List: list}
	}
	syncOnce(t, root, "r1", skillWith(0o755))
	live := filepath.Join(root, "src", "a")
	folder := stat(t, live).ino
	changes, st := syncOnce(t, root, "r2", skillWith(0o644))
	if len(changes) != 1 || st.Written != 1 || stat(t, live).ino != folder {
		t.Errorf("changes %v, stats %+v, folder kept %v", changes, st, stat(t, live).ino == folder)
	}
	if info, err := os.Lstat(filepath.Join(live, "run.sh")); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("run.sh: %v %v", info, err)
	}
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Errorf("verify: %v", diffs)
	}
}

// TestAPatchNeverGoesThroughALink: a folder of the live copy replaced by
// a link out of the cache is never written through, trusted or not: the
// skill is built whole, and the link is gone from the cache.
func TestAPatchNeverGoesThroughALink(t *testing.T) {
	t.Parallel()
	for _, check := range []Check{CheckRecord, CheckStat} {
		for _, change := range []map[string]string{
			{"SKILL.md": "s", "ref/notes.md": "notes v2"},               // edited below the link
			{"SKILL.md": "s", "ref/notes.md": "n", "ref/new.md": "new"}, // added below it
			{"SKILL.md": "s", "ref/notes.md": "n"},                      // removed below it
		} {
			root, outside := t.TempDir(), t.TempDir()
			old := map[string]string{"SKILL.md": "s", "ref/notes.md": "n"}
			if len(change) == 2 && change["ref/notes.md"] == "n" {
				old["ref/gone.md"] = "g"
			}
			syncOnce(t, root, "r1", mkSkill("a", old))
			live := filepath.Join(root, "src", "a")
			for p, v := range old {
				if filepath.Dir(p) == "ref" {
					if err := os.WriteFile(filepath.Join(outside, filepath.Base(p)), []byte(v), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.RemoveAll(filepath.Join(live, "ref")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(live, "ref")); err != nil {
				t.Fatal(err)
			}
			outsideBefore, _ := tree(t, outside)
			c := openCheck(t, root, check)
			if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{mkSkill("a", change)}}); len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			if err := c.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if got, _ := tree(t, outside); !reflect.DeepEqual(got, outsideBefore) {
				t.Errorf("check %d: outside the cache went from %v to %v", check, outsideBefore, got)
			}
			if info, err := os.Lstat(filepath.Join(live, "ref")); err != nil || !info.IsDir() {
				t.Errorf("check %d: ref is %v, %v; want a real folder", check, info, err)
			}
			if got, _ := tree(t, live); !reflect.DeepEqual(got, change) {
				t.Errorf("check %d: live holds %v, want %v", check, got, change)
			}
		}
	}
}

// TestAPatchDropsWhatIsNotTrusted: after a sync that stopped halfway,
// a live copy holding a file nobody recorded is built whole, so the file
// goes, as it would with any other change; a trusted copy is patched.
func TestAPatchDropsWhatIsNotTrusted(t *testing.T) {
	t.Parallel()
	for _, check := range []Check{CheckStat, CheckHash} {
		root := t.TempDir()
		syncOnce(t, root, "r1", mkSkill("a", v1))
		live := filepath.Join(root, "src", "a")
		if err := os.WriteFile(filepath.Join(live, "ref", "planted.md"), []byte("p"), 0o644); err != nil {
			t.Fatal(err)
		}
		want := maps.Clone(v1)
		want["ref/notes.md"] = "notes v2"
		c := openCheck(t, root, check)
		if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{mkSkill("a", want)}}); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		if err := c.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if got, _ := tree(t, live); !reflect.DeepEqual(got, want) {
			t.Errorf("check %d: live holds %v, want %v", check, got, want)
		}
	}
}

// TestAPatchThatCannotGoInKeepsTheOld: when the rename of a patch fails
// at commit, the live copy and its record stay the old version, the
// source is looked at again by the next sync, and that sync puts the new
// version in.
func TestAPatchThatCannotGoInKeepsTheOld(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	live := filepath.Join(root, "src", "a")
	m1, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	old := m1.Sources["src"].Skills["a"].Hash
	want := maps.Clone(v1)
	want["ref/notes.md"] = "notes v2"
	c := open(t, root)
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{mkSkill("a", want)}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	// Between staging and commit the file becomes a folder that is not
	// empty: no file can be renamed over it.
	notes := filepath.Join(live, "ref", "notes.md")
	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(notes, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(context.Background()); err == nil {
		t.Fatal("a patch that could not go in was not an error")
	}
	c.Close()
	m2, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	if rec := m2.Sources["src"]; rec.Revision != "" || rec.Skills["a"].Hash != old {
		t.Errorf("record after the failed patch: revision %q, hash %v, want \"\" and %v", rec.Revision, rec.Skills["a"].Hash, old)
	}
	syncOnce(t, root, "r2", mkSkill("a", want))
	liveAndVerified(t, root, live, want)
}

// TestATargetCopyIsPatched: a target's copy is patched as the cache's
// is, and a copy the user edited is still moved aside whole.
func TestATargetCopyIsPatched(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sync := copySkillA(t, dir)
	sync(v1)
	live := filepath.Join(dir, "a")
	folder := stat(t, live).ino
	v2 := maps.Clone(v1)
	v2["ref/notes.md"] = "notes v2"
	if rep := sync(v2); rep.Written != 1 || stat(t, live).ino != folder {
		t.Errorf("report %+v, folder kept %v", rep, stat(t, live).ino == folder)
	}
	if got, _ := tree(t, live); !reflect.DeepEqual(got, v2) {
		t.Errorf("target holds %v", got)
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) > 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
	// The user edits SKILL.md; the next version changes notes.md only.
	if err := os.WriteFile(filepath.Join(live, "SKILL.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := sync(v1)
	if len(rep.Preserved) != 1 {
		t.Fatalf("preserved %v", rep.Preserved)
	}
	if got, _ := tree(t, rep.Preserved[0]); got["SKILL.md"] != "mine" || got["ref/notes.md"] != "notes v2" {
		t.Errorf("the edited copy kept aside holds %v", got)
	}
	if got, _ := tree(t, live); !reflect.DeepEqual(got, v1) {
		t.Errorf("target holds %v", got)
	}
}
