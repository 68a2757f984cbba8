package materialize

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// decodeFiles checks the file records of a source and gives each of its
// skills, which must be exactly the skills the records name, its files
// to decode when asked, as loadFiles does with what it read.
func decodeFiles(data []byte, skills map[string]*SkillRecord) error {
	names := sortedNames(skills)
	raws, err := splitFiles(data, names)
	if err != nil {
		return err
	}
	giveFiles(skills, names, raws)
	return nil
}

// victim makes dir with one file in it, the thing a hostile record aims at.
func victim(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func assertIntact(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil || string(data) != "precious" {
		t.Fatalf("%s outside the destination was touched: %q %v", p, data, err)
	}
}

// setAside returns the files in dir that start with base+".corrupt-".
func setAside(t *testing.T, dir, base string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+".corrupt-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestHostileManifestNamesAreNeverObeyed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		// plant replaces the cache's records with ones naming the source
		// "../x" and the skill "../../y", and says what the sync must warn.
		plant func(t *testing.T, root string) string
	}{
		{"version-2 manifest", func(t *testing.T, root string) string {
			hostile := `{"version":2,"sources":{"../x":{"revision":"r0","skills":{}},` +
				`"src":{"revision":"r1","skills":{"../../y":{"hash":"","files":{}}}}}}`
			if err := os.WriteFile(filepath.Join(root, manifestName), []byte(hostile), 0o644); err != nil {
				t.Fatal(err)
			}
			return "set aside"
		}},
		{"index", func(t *testing.T, root string) string {
			data := strings.Replace(readFile(t, filepath.Join(root, manifestName)), `"src"`, `"../x"`, 1)
			if err := os.WriteFile(filepath.Join(root, manifestName), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			return "set aside"
		}},
		{"skill records", func(t *testing.T, root string) string {
			m, err := ReadManifest(root)
			if err != nil {
				t.Fatal(err)
			}
			rec := m.Sources["src"]
			rec.Skills["../../y"] = &SkillRecord{files: map[string]FileRecord{}}
			rec.skillsRef, rec.filesRef = Hash{}, Hash{}
			// Written as a sync would, names unchecked.
			if err := m.writeRecords(dest{}, root); err != nil {
				t.Fatal(err)
			}
			if err := m.saveIndex(dest{}, root); err != nil {
				t.Fatal(err)
			}
			return "records of source src cannot be used"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			root := filepath.Join(ws, ".skills-cache")
			syncOnce(t, root, "r1", mkSkill("a", v1))
			outSource := victim(t, filepath.Join(ws, "x"))
			outSkill := victim(t, filepath.Join(ws, "y"))
			want := tt.plant(t, root)

			c := open(t, root)
			if w := c.OpenWarnings(); len(w) != 1 || !strings.Contains(w[0], want) {
				t.Errorf("warnings = %q, want one saying %q", w, want)
			}
			if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{mkSkill("a", v1)}}); len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			if res := c.Prune([]string{"src"}); len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			if err := c.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := c.Stats()
			c.Close()
			assertIntact(t, outSource)
			assertIntact(t, outSkill)
			if want == "set aside" {
				if got := setAside(t, root, manifestName); len(got) != 1 {
					t.Errorf("set-aside copies of the manifest: %v", got)
				}
			}
			after, err := ReadManifest(root)
			if err != nil {
				t.Fatal(err)
			}
			if names := sortedNames(after.Sources); !slices.Equal(names, []string{"src"}) || len(after.Sources["src"].Skills) != 1 {
				t.Errorf("rebuilt manifest: sources %v, skills %v", names, sortedNames(after.Sources["src"].Skills))
			}
			if readFile(t, filepath.Join(root, "src", "a", "ref/notes.md")) != v1["ref/notes.md"] {
				t.Error("the cached skill was lost")
			}
			if st.Written != 0 {
				t.Errorf("stats %+v: the cached files were rewritten", st)
			}
		})
	}
}

func TestHostileTargetRecordIsNeverObeyed(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "ws", ".claude", "skills")
	out := victim(t, filepath.Join(base, "victim"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, record := range []string{
		`{"version":1,"skills":{"../../../victim":{"hash":"","mode":"copy"}}}`,
		`{"version":1,"skills":{"../../../victim":{"hash":"","mode":"symlink","link":"/"}}}`,
		`{"version":1,"skills":{"a":{"hash":"","mode":"copy","files":{"../../../../victim/keep.txt":{"sha256":"","size":8,"mode":"0644"}}}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, RecordName), []byte(record), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{{Skill: mkSkill("b", v1)}}})
		if err != nil {
			t.Fatal(err)
		}
		assertIntact(t, out)
		if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "set aside") {
			t.Errorf("warnings = %q, want one saying the record was set aside", rep.Warnings)
		}
	}
	if got := setAside(t, dir, RecordName); len(got) != 3 {
		t.Errorf("set-aside copies of the record: %v", got)
	}
	rec, err := LoadTargetRecord(dir)
	if err != nil || len(rec.Skills) != 1 || rec.Skills["b"] == nil {
		t.Errorf("rebuilt record: %+v %v", rec, err)
	}
}

// FuzzRecords decodes arbitrary bytes as a version-2 manifest, as a
// source's binary skill and file records, and as a target record:
// whatever passes validation names only paths inside its destination.
func FuzzRecords(f *testing.F) {
	f.Add([]byte(`{"version":1,"sources":{"s":{"revision":"r","skills":{"a":{"hash":"","files":{"x/y":{"sha256":"","size":1,"mode":"0644"}}}}}}}`))
	f.Add([]byte(`{"version":1,"sources":{"..":{"skills":{"../b":{"files":{"/etc/passwd":{"mode":"0644"}}}}}}}`))
	f.Add([]byte(`{"version":1,"skills":{"a":{"mode":"copy","files":{"a/../../b":{"mode":"0644"}}}}}`))
	good := &SourceRecord{Skills: map[string]*SkillRecord{
		"a": {Fingerprint: "git-tree:1", Meta: []byte("m"), files: map[string]FileRecord{"SKILL.md": {Size: 3, Mode: "0644", MTime: 7}, "x/y.sh": {Mode: "0755"}}},
		"b": {files: map[string]FileRecord{}},
	}, filesLoaded: true}
	f.Add(encodeSkills(good))
	f.Add(encodeFiles(good))
	const root = "/dest"
	inside := func(t *testing.T, parts ...string) {
		p := filepath.Join(append([]string{root}, parts...)...)
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") || len(strings.Split(rel, string(filepath.Separator))) < len(parts) {
			t.Fatalf("%q escapes %s as %s", parts, root, p)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m legacy
		if json.Unmarshal(data, &m) == nil && m.Validate() == nil {
			for source, rec := range m.Sources {
				inside(t, source)
				for name, sk := range rec.Skills {
					inside(t, source, name)
					for p := range sk.Files {
						inside(t, source, name, filepath.FromSlash(p))
					}
				}
			}
		}
		var x index
		if json.Unmarshal(data, &x) == nil && x.Validate() == nil {
			for source := range x.Sources {
				inside(t, source)
			}
		}
		if skills, _, _, err := decodeSkills(data); err == nil {
			for name := range skills {
				inside(t, "src", name)
			}
		}
		// The file records of the good skill records, as data says.
		skills, _, _, _ := decodeSkills(encodeSkills(good))
		if decodeFiles(data, skills) == nil {
			for name, sk := range skills {
				for p, rec := range sk.Files() {
					inside(t, "src", name, filepath.FromSlash(p))
					if rec.Perm()&^0o777 != 0 || rec.Size < 0 {
						t.Fatalf("file %s: mode %s size %d", p, rec.Mode, rec.Size)
					}
				}
			}
		}
		r := newTargetRecord()
		if json.Unmarshal(data, r) == nil && r.Validate() == nil {
			for name, e := range r.Skills {
				inside(t, name)
				for p := range e.Files {
					inside(t, name, filepath.FromSlash(p))
				}
			}
		}
	})
}

// outsideDir is a directory outside every destination holding one file.
func outsideDir(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	return dir, victim(t, dir)
}

func TestPlantedLinksAreNeverFollowed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	out, keep := outsideDir(t)

	// Staging folders that are links are removed, never followed.
	root := t.TempDir()
	if err := os.Symlink(out, filepath.Join(root, stagingName)); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, root, "r1", mkSkill("a", v1))
	target := t.TempDir()
	if err := os.Symlink(out, filepath.Join(target, targetStaging)); err != nil {
		t.Fatal(err)
	}
	if _, err := SyncTarget(ctx, Target{Dir: target, Mode: Copy, Skills: []TargetSkill{{Skill: mkSkill("a", v1)}}}); err != nil {
		t.Fatal(err)
	}
	assertIntact(t, keep)
	if info, err := os.Lstat(filepath.Join(root, stagingName)); err != nil || !info.IsDir() {
		t.Errorf("the cache's staging folder is not a real folder: %v", err)
	}

	// A cache, a target or a record that is a link is refused.
	linked := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(out, linked); err != nil {
		t.Fatal(err)
	}
	if c, err := OpenCache(ctx, linked, time.Second, CheckRecord); err == nil || !strings.Contains(err.Error(), linked) {
		if c != nil {
			c.Close()
		}
		t.Errorf("a linked cache was opened: %v", err)
	}
	if _, err := SyncTarget(ctx, Target{Dir: linked, Mode: Copy, Skills: []TargetSkill{{Skill: mkSkill("a", v1)}}}); err == nil || !strings.Contains(err.Error(), linked) {
		t.Errorf("a linked target was written: %v", err)
	}
	if err := os.Remove(filepath.Join(root, manifestName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(keep, filepath.Join(root, manifestName)); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, root, "r2", mkSkill("a", v1))
	assertIntact(t, keep)
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("files appeared outside: %v", entries)
	}
}

func TestALinkedSkillIsReplacedEvenWhenItsContentMatches(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	// Someone moves the skill out and links it back: every file still
	// matches its record through the link.
	outside := filepath.Join(t.TempDir(), "a")
	live := filepath.Join(root, "src", "a")
	if err := os.Rename(live, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, live); err != nil {
		t.Fatal(err)
	}
	// A stat check sees it; the record alone does not look (the cache is
	// skillsync's own), but nothing is written through the link either.
	c, err := OpenCache(context.Background(), root, time.Second, CheckStat)
	if err != nil {
		t.Fatal(err)
	}
	if c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Error("a cache with a linked skill is current")
	}
	c.Close()
	_, st := syncOnce(t, root, "r2", mkSkill("a", v1))
	if info, err := os.Lstat(live); err != nil || !info.IsDir() {
		t.Fatalf("the link was kept: %v", err)
	}
	if st.Written != len(v1) {
		t.Errorf("stats %+v: files behind a link were taken as the cache's own", st)
	}
	if readFile(t, filepath.Join(outside, "ref/notes.md")) != v1["ref/notes.md"] {
		t.Error("the files behind the link were touched")
	}
}

// TestOwnSetAsideIsNotForeign: a manifest skillsync set aside
// itself is not reported as "not made by skillsync" by later syncs.
func TestOwnSetAsideIsNotForeign(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), ".skills-cache")
	syncOnce(t, root, "r1", mkSkill("a", v1))
	if err := os.WriteFile(filepath.Join(root, manifestName), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "stranger.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		c := open(t, root)
		if res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Skills: []Skill{mkSkill("a", v1)}}); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		res := c.Prune([]string{"src"})
		if err := c.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "stranger.txt") {
			t.Errorf("sync %d warned %q, want only stranger.txt", i+1, res.Warnings)
		}
	}
	if got := setAside(t, root, manifestName); len(got) != 1 {
		t.Errorf("set-aside manifests: %v", got)
	}
}

// TestSortedSkillsFollowsTheRecordsAsTheyChange: a source's skill names
// come in the order its record file held them while they are still the
// names of its skills, and sorted anew from the skills themselves once a
// skill is added, removed, or one swapped for another (the same count).
func TestSortedSkillsFollowsTheRecordsAsTheyChange(t *testing.T) {
	t.Parallel()
	data := encodeSkills(&SourceRecord{Skills: map[string]*SkillRecord{"alpha": {}, "beta": {}, "gamma": {}}})
	tests := []struct {
		name   string
		change func(map[string]*SkillRecord)
		want   []string
	}{
		{"as read", func(map[string]*SkillRecord) {}, []string{"alpha", "beta", "gamma"}},
		{"one added", func(m map[string]*SkillRecord) { m["aardvark"] = &SkillRecord{} }, []string{"aardvark", "alpha", "beta", "gamma"}},
		{"one removed", func(m map[string]*SkillRecord) { delete(m, "beta") }, []string{"alpha", "gamma"}},
		{"one swapped", func(m map[string]*SkillRecord) { delete(m, "gamma"); m["delta"] = &SkillRecord{} }, []string{"alpha", "beta", "delta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skills, names, _, err := decodeSkills(data)
			if err != nil {
				t.Fatal(err)
			}
			rec := &SourceRecord{Skills: skills, read: names}
			tt.change(rec.Skills)
			if got := rec.sortedSkills(); !slices.Equal(got, tt.want) {
				t.Errorf("sortedSkills() = %v, want %v", got, tt.want)
			}
		})
	}
}
