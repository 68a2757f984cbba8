package materialize

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/jsonfile"
)

func openCheck(t *testing.T, root string, check Check) *Cache {
	t.Helper()
	c, err := OpenCache(context.Background(), root, time.Second, check)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// records lists the record files of a cache.
func records(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, recordsName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	rec := &SourceRecord{Skills: map[string]*SkillRecord{
		"b": {Hash: Hash{1}, Fingerprint: "git-tree:2", Meta: []byte{0, 1, 2}, files: map[string]FileRecord{
			"SKILL.md":    {SHA256: Hash{3}, Size: 1 << 40, Mode: "0644", MTime: -5},
			"x/run.sh":    {SHA256: Hash{4}, Size: 0, Mode: "0755", MTime: 1796035070839265652},
			"x/.env.ex":   {Mode: "0600"},
			"ünïcode.txt": {Mode: "0644"},
		}},
		"a": {files: map[string]FileRecord{}},
	}, filesLoaded: true}
	skills, _, _, err := decodeSkills(encodeSkills(rec))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeFiles(encodeFiles(rec), skills); err != nil {
		t.Fatal(err)
	}
	// Encoded again from the bytes each skill keeps, the records are the
	// same bytes.
	if again := encodeFiles(&SourceRecord{Skills: skills}); !bytes.Equal(again, encodeFiles(rec)) {
		t.Error("file records encoded from the bytes kept differ from the first encoding")
	}
	for name, sk := range skills {
		if sk.raw == nil {
			t.Errorf("skill %s keeps no bytes of its file records", name)
		}
		skills[name] = newSkillRecord(sk.Hash, sk.Fingerprint, sk.Meta, sk.Files())
	}
	if !reflect.DeepEqual(skills, rec.Skills) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", skills, rec.Skills)
	}
	// The file records belong to exactly these skills.
	other, _, _, _ := decodeSkills(encodeSkills(&SourceRecord{Skills: map[string]*SkillRecord{"a": {}}}))
	if err := decodeFiles(encodeFiles(rec), other); err == nil {
		t.Error("file records of two skills were taken for a source of one")
	}
	// Every cut of a record is refused, never half taken.
	data := encodeFiles(rec)
	for n := range len(data) {
		skills, _, _, _ := decodeSkills(encodeSkills(rec))
		if decodeFiles(data[:n], skills) == nil {
			t.Fatalf("file records cut at %d of %d bytes were taken", n, len(data))
		}
	}
}

func TestARecordFileMustHashToItsName(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	p := recordPath(root, m.Sources["src"].skillsRef, skillsExt)
	data := []byte(readFile(t, p))
	data[len(data)-1] ^= 1
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSkills(root); !errors.Is(err, jsonfile.ErrCorrupt) {
		t.Errorf("a changed record was read: %v", err)
	}
	c := open(t, root)
	if w := c.OpenWarnings(); len(w) != 1 || !strings.Contains(w[0], "records of source src cannot be used") {
		t.Errorf("warnings %q", w)
	}
	if c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Error("a source whose records do not check out is current")
	}
}

// TestNoOpLooksAtNoFile: with the record trusted, a source at its
// revision is current without a look at its files or their records; a
// stat check sees what changed.
func TestNoOpLooksAtNoFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1), mkSkill("b", v1))
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	// The file records and a cached file are gone: the fast path cannot
	// have read the first nor stat'ed the second.
	if err := os.Remove(recordPath(root, m.Sources["src"].filesRef, filesExt)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "src", "a", "ref", "notes.md")); err != nil {
		t.Fatal(err)
	}
	c := open(t, root)
	src := Source{Name: "src", Revision: "r1"}
	if !c.Current(src) {
		t.Error("the record was not trusted")
	}
	if st := c.Stats(); st.Unchanged != 2*len(v1) {
		t.Errorf("stats %+v, want every recorded file unchanged", st)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := c.OpenWarnings(); len(w) > 0 {
		t.Errorf("warnings %q", w)
	}
	c.Close()

	// A stat check needs the file records: without them it hashes again.
	c = openCheck(t, root, CheckStat)
	if c.Current(src) {
		t.Error("a stat check found a source current without its file records")
	}
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Skills: []Skill{mkSkill("a", v1), mkSkill("b", v1)}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Written != 1 {
		t.Errorf("stats %+v, want the lost file written again", st)
	}
	c.Close()
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Errorf("verify: %v", diffs)
	}
	c = openCheck(t, root, CheckStat)
	if !c.Current(src) {
		t.Error("a repaired cache is not current under a stat check")
	}
}

// TestAStoppedSyncIsNotTrusted: a sync that changed live folders and
// stopped before its manifest was written leaves a mark, and the next
// sync checks stat data instead of trusting the old records.
func TestAStoppedSyncIsNotTrusted(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	v2 := map[string]string{"SKILL.md": v1["SKILL.md"], "ref/notes.md": "notes v2"}

	c := open(t, root)
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{mkSkill("a", v2)}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	// The swaps happen; the process dies before the manifest is saved.
	if _, err := c.writer.commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Lstat(filepath.Join(root, dirtyName)); err != nil {
		t.Fatalf("no mark of the stopped sync: %v", err)
	}

	// Back to r1, which the manifest still records: not trusted.
	c = open(t, root)
	if c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Fatal("the records of a sync that stopped halfway were trusted")
	}
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Skills: []Skill{mkSkill("a", v1)}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Errorf("verify: %v", diffs)
	}
	if _, err := os.Lstat(filepath.Join(root, dirtyName)); err == nil {
		t.Error("the mark outlived the sync that repaired the cache")
	}
	// A sync with nothing new writes nothing, the mark included.
	c = open(t, root)
	if !c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Error("a repaired cache is not current")
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, dirtyName)); err == nil {
		t.Error("a sync with nothing new left a mark")
	}
}

// TestAStoppedPatchIsNotTrusted: a sync that patched one file of a skill
// (added, changed or removed it) and stopped before its manifest was
// written leaves the skill's other files as recorded. Going back to the
// recorded version, the next sync must find the patch, the added file
// included, which no recorded file's stat data shows.
func TestAStoppedPatchIsNotTrusted(t *testing.T) {
	t.Parallel()
	base := map[string]string{"SKILL.md": v1["SKILL.md"], "ref/a.md": "a", "ref/b.md": "b"}
	with := func(path, data string) map[string]string {
		m := maps.Clone(base)
		if data == "" {
			delete(m, path)
		} else {
			m[path] = data
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		patch map[string]string
	}{
		{"added", with("ref/c.md", "c")},
		{"changed", with("ref/b.md", "b, longer")},
		{"removed", with("ref/b.md", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			skill := func(files map[string]string, fp string) Skill {
				s := mkSkill("a", files)
				s.Fingerprint = fp
				return s
			}
			syncOnce(t, root, "r1", skill(base, "f1"))
			c := open(t, root)
			if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{skill(tc.patch, "f2")}}); len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			// The patch goes live; the process dies before the manifest is saved.
			if _, err := c.writer.commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			live := map[string]string{}
			dir := filepath.Join(root, "src", "a")
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					data, _ := os.ReadFile(p)
					rel, _ := filepath.Rel(dir, p)
					live[filepath.ToSlash(rel)] = string(data)
				}
				return err
			})
			if !maps.Equal(live, tc.patch) {
				t.Fatalf("live after the stopped sync = %v, want the patched version", live)
			}
			c.Close()

			c = open(t, root)
			if c.Current(Source{Name: "src", Revision: "r1"}) {
				t.Error("the records of a stopped patch were trusted")
			}
			if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Skills: []Skill{skill(base, "f1")}}); len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			if err := c.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			c.Close()
			if diffs := verifyCache(t, root); len(diffs) > 0 {
				t.Errorf("verify after going back: %v", diffs)
			}
		})
	}
}

// TestRecordsOutliveOneSync: a reader that read the manifest before a
// sync still finds its records; the ones two syncs old are removed.
func TestRecordsOutliveOneSync(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	first := records(t, root)
	syncOnce(t, root, "r2", mkSkill("a", map[string]string{"SKILL.md": "2"}))
	second := records(t, root)
	for _, name := range first {
		if !strings.Contains(strings.Join(second, " "), name) {
			t.Errorf("record %s of the manifest before was removed at once", name)
		}
	}
	syncOnce(t, root, "r3", mkSkill("a", map[string]string{"SKILL.md": "3"}))
	third := strings.Join(records(t, root), " ")
	for _, name := range first {
		if strings.Contains(third, name) {
			t.Errorf("record %s outlived two syncs", name)
		}
	}
	if len(records(t, root)) != 4 {
		t.Errorf("records: %v", records(t, root))
	}
}

// TestTargetTrustsItsRecord: a target skill whose hash is the recorded
// one is not looked at under CheckRecord; a stat check puts back what the
// user removed.
func TestTargetTrustsItsRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s := TargetSkill{Skill: mkSkill("a", v1)}
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{s}}); err != nil {
		t.Fatal(err)
	}
	rec, err := LoadTargetRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Hash = rec.Skills["a"].Hash
	gone := filepath.Join(dir, "a", "ref", "notes.md")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	r, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{s}})
	if err != nil || r.Written != 0 {
		t.Errorf("a trusted target was written: %+v %v", r, err)
	}
	r, err = SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{s}, Check: CheckStat})
	// A copy that only lacks a file holds nothing of the user's to keep.
	if err != nil || len(r.Preserved) != 0 || r.Written != 1 {
		t.Errorf("a stat check did not write the file back alone: %+v %v", r, err)
	}
	if readFile(t, gone) != v1["ref/notes.md"] {
		t.Error("the removed file was not put back")
	}
}

func TestRecordedNeedsTheSameDiscovery(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := mkSkill("a", v1)
	a.Fingerprint = "git-tree:1"
	c := open(t, root)
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Discovery: "d1", Skills: []Skill{a}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c = open(t, root)
	if name, rec, ok := c.Recorded("src", "d1", "git-tree:1"); !ok || name != "a" || len(rec.Files()) != len(v1) {
		t.Errorf("Recorded = %q %+v %v", name, rec, ok)
	}
	for _, tt := range [][2]string{{"d2", "git-tree:1"}, {"d1", "git-tree:2"}, {"", "git-tree:1"}, {"d1", ""}} {
		if _, _, ok := c.Recorded("src", tt[0], tt[1]); ok {
			t.Errorf("Recorded(%q, %q) found a record", tt[0], tt[1])
		}
	}
	// A new sync of the source answers from its new records.
	a.Fingerprint = "git-tree:2"
	if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Discovery: "d1", Skills: []Skill{a}}); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if _, _, ok := c.Recorded("src", "d1", "git-tree:1"); ok {
		t.Error("a record the source no longer has was found")
	}
	if name, _, ok := c.Recorded("src", "d1", "git-tree:2"); !ok || name != "a" {
		t.Error("the new record was not found")
	}
}

// TestOldFoldersAreRecycled: the folder of a version swapped out by one
// sync becomes the folder the next sync builds a new version in, emptied
// of its files, its folders reused or removed as the new version needs.
func TestOldFoldersAreRecycled(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	v := func(files map[string]string) Skill { return mkSkill("a", files) }
	syncOnce(t, root, "r1", v(map[string]string{"SKILL.md": "1", "x/y/deep.md": "d", "z/notes.md": "n"}))
	// Two files change, so r2 is built whole (one would be patched in
	// place, patch.go).
	syncOnce(t, root, "r2", v(map[string]string{"SKILL.md": "2", "x/y/deep.md": "d2", "z/notes.md": "n"}))
	left := map[uint64]bool{}
	entries, err := os.ReadDir(filepath.Join(root, stagingName))
	if err != nil || len(entries) != 1 {
		t.Fatalf("staging holds %v, %v; want the version r2 swapped out", entries, err)
	}
	left[stat(t, filepath.Join(root, stagingName, entries[0].Name())).ino] = true

	// A sync right after does not recycle it: a reader may be in it.
	c := open(t, root)
	if dir := c.writer.take(); dir != "" {
		t.Errorf("a folder swapped out moments ago is up for recycling: %s", dir)
	}
	c.Close()

	// r3, once it has settled, needs no x/, a file where z/ was, and a
	// new folder w/.
	want := map[string]string{"SKILL.md": "3", "z": "now a file", "w/new.md": "w"}
	c, err = openCache(context.Background(), root, time.Second, CheckRecord, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r3", Skills: []Skill{v(want)}})
	if err := c.Commit(context.Background()); err != nil || len(res.Errors) > 0 {
		t.Fatal(err, res.Errors)
	}
	changes, st := res.Changes, c.Stats()
	c.Close()
	if len(changes) != 1 || st.Written != 3 {
		t.Errorf("changes %v, stats %+v", changes, st)
	}
	live := filepath.Join(root, "src", "a")
	if !left[stat(t, live).ino] {
		t.Error("the new version was not built in the folder left in staging")
	}
	got := map[string]string{}
	var dirs []string
	err = filepath.WalkDir(live, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(live, p)
		if d.IsDir() {
			dirs = append(dirs, filepath.ToSlash(rel))
			return nil
		}
		got[filepath.ToSlash(rel)] = readFile(t, p)
		return nil
	})
	if err != nil || !reflect.DeepEqual(got, want) || !slices.Equal(dirs, []string{".", "w"}) {
		t.Errorf("live: files %v, folders %v, %v", got, dirs, err)
	}
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Errorf("verify: %v", diffs)
	}
}
