package materialize

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skillhash"
)

func TestHashText(t *testing.T) {
	t.Parallel()
	h := skillhash.New()
	addContent(h, "SKILL.md", []byte("x"))
	sum := Hash(h.Sum())
	back, err := ParseHash(sum.String())
	if err != nil || back != sum || len(sum.String()) != 64 || sum.Short() != sum.String()[:12] {
		t.Errorf("round trip of %s: %s %v", sum, back, err)
	}
	if (Hash{}).String() != "" || !(Hash{}).IsZero() {
		t.Error("the zero hash does not print as empty")
	}
	for _, bad := range []string{"abc", strings.Repeat("g", 64), strings.Repeat("a", 66)} {
		if _, err := ParseHash(bad); err == nil {
			t.Errorf("ParseHash(%q) succeeded", bad)
		}
	}
}

// TestManifestShape pins the manifest's JSON, an index of sources that
// other tools read, and checks that the records it names give back what
// was written.
func TestManifestShape(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s := mkSkill("a", map[string]string{"SKILL.md": "s"})
	s.Fingerprint = "git-tree:abc"
	s.Meta = []byte(`{"name":"a","description":"d"}`)
	c := open(t, root)
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r1", Fingerprint: "cfg1", Skills: []Skill{s}, Excluded: []string{"old"}})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	src := m.Sources["src"]
	rec := src.Skills["a"]
	f := rec.Files()["SKILL.md"]
	want := `{
  "version": 3,
  "sources": {
    "src": {
      "revision": "r1",
      "fingerprint": "cfg1",
      "excluded": [
        "old"
      ],
      "skills": 1,
      "files": 1,
      "skill_records": "` + src.skillsRef.String() + `",
      "file_records": "` + src.filesRef.String() + `"
    }
  },
  "exchanges_marked": true
}
`
	if got := readFile(t, filepath.Join(root, manifestName)); got != want {
		t.Errorf("manifest:\n%s\nwant:\n%s", got, want)
	}
	if rec.Hash.IsZero() || f.SHA256.IsZero() || f.Size != 1 || f.Mode != "0644" || f.MTime == 0 {
		t.Errorf("file record %+v", f)
	}
	if rec.Fingerprint != "git-tree:abc" || string(rec.Meta) != string(s.Meta) {
		t.Errorf("skill record %+v", rec)
	}
	light, err := ReadSkills(root)
	if err != nil {
		t.Fatal(err)
	}
	if sk := light.Sources["src"].Skills["a"]; sk == nil || sk.Hash != rec.Hash || sk.Files() != nil || string(sk.Meta) != string(s.Meta) {
		t.Errorf("ReadSkills: %+v", sk)
	}
	for _, ref := range []string{src.skillsRef.String() + skillsExt, src.filesRef.String() + filesExt} {
		if _, err := os.Stat(filepath.Join(root, recordsName, ref)); err != nil {
			t.Errorf("record file: %v", err)
		}
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestFingerprintChangeIsAChange(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := open(t, root)
	src := Source{Name: "src", Revision: "r1", Fingerprint: "path=skills/.system", Skills: []Skill{mkSkill("a", v1)}}
	if res := c.SyncSource(context.Background(), src); len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !c.Current(src) {
		t.Error("a source just synced is not current")
	}
	src.Fingerprint = "path=skills/.experimental"
	if c.Current(src) {
		t.Error("a source whose config changed is current at the same revision")
	}
}

// legacyJSON returns the cache's manifest as version 1 or 2 wrote it,
// with the skill hashes of the first kind that those versions held:
// old gives each skill's.
func legacyJSON(t *testing.T, root string, version int, old func(name string) Hash) []byte {
	t.Helper()
	m, err := ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	file := legacy{Version: version, Sources: map[string]*legacySource{}}
	for source, rec := range m.Sources {
		ls := &legacySource{Revision: rec.Revision, Fingerprint: rec.Fingerprint, Excluded: rec.Excluded, Skills: map[string]*legacySkill{}}
		for name, sk := range rec.Skills {
			ls.Skills[name] = &legacySkill{Hash: old(name), Fingerprint: sk.Fingerprint, Meta: sk.Meta, Files: sk.Files()}
		}
		file.Sources[source] = ls
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestOlderManifestsAreReadAndRewritten(t *testing.T) {
	t.Parallel()
	for _, version := range []int{1, 2} {
		root := t.TempDir()
		syncOnce(t, root, "r1", mkSkill("a", v1))
		dir := filepath.Join(root, "src", "a")
		before := stat(t, filepath.Join(dir, "SKILL.md"))
		hash := hashAlone(t, mkSkill("a", v1))
		first := func(string) Hash { return firstKindHash(t, v1) }
		if err := os.WriteFile(filepath.Join(root, manifestName), legacyJSON(t, root, version, first), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(root, recordsName)); err != nil {
			t.Fatal(err)
		}
		if m, err := ReadSkills(root); err != nil || m.Sources["src"].Skills["a"] == nil {
			t.Fatalf("version %d: a reader lost the sources: %v", version, err)
		} else if got := m.Sources["src"].Skills["a"].Hash; got != hash {
			t.Errorf("version %d: read with the hash %s, today's is %s", version, got, hash)
		}
		c := open(t, root)
		if w := c.OpenWarnings(); len(w) > 0 {
			t.Errorf("version %d gave warnings: %v", version, w)
		}
		if !c.Current(Source{Name: "src", Revision: "r1"}) {
			t.Errorf("version %d lost its sources", version)
		}
		if err := c.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if got := readFile(t, filepath.Join(root, manifestName)); !strings.Contains(got, `"version": 3`) {
			t.Errorf("version %d was not rewritten: %s", version, got)
		}
		m, err := ReadManifest(root)
		if err != nil || len(m.Sources["src"].Skills["a"].Files()) != len(v1) || m.Sources["src"].Skills["a"].Hash != hash {
			t.Errorf("version %d after the rewrite: %v", version, err)
		}
		if stat(t, filepath.Join(dir, "SKILL.md")) != before {
			t.Errorf("version %d: a cached file was rewritten", version)
		}
	}
}
