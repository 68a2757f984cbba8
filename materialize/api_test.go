package materialize

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHashText(t *testing.T) {
	h := newSkillHasher()
	h.add("SKILL.md", []byte("x"))
	sum := h.sum()
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

// TestManifestShape pins the manifest's JSON: other tools and the lock
// read it.
func TestManifestShape(t *testing.T) {
	root := t.TempDir()
	s := mkSkill("a", map[string]string{"SKILL.md": "s"})
	s.Fingerprint = "git-tree:abc"
	s.Meta = json.RawMessage(`{"name":"a","description":"d"}`)
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
	rec := m.Sources["src"].Skills["a"]
	f := rec.Files["SKILL.md"]
	want := `{
  "version": 2,
  "sources": {
    "src": {
      "revision": "r1",
      "fingerprint": "cfg1",
      "excluded": [
        "old"
      ],
      "skills": {
        "a": {
          "hash": "` + rec.Hash.String() + `",
          "fingerprint": "git-tree:abc",
          "meta": {
            "name": "a",
            "description": "d"
          },
          "files": {
            "SKILL.md": {
              "sha256": "` + f.SHA256.String() + `",
              "size": 1,
              "mode": "0644",
              "mtime_ns": ` + jsonInt(f.MTime) + `
            }
          }
        }
      }
    }
  }
}
`
	if got := readFile(t, filepath.Join(root, manifestName)); got != want {
		t.Errorf("manifest:\n%s\nwant:\n%s", got, want)
	}
	if rec.Hash.IsZero() || f.SHA256.IsZero() {
		t.Error("hashes are missing")
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestFingerprintChangeIsAChange(t *testing.T) {
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

func TestVersionOneManifestIsRead(t *testing.T) {
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	data := readFile(t, filepath.Join(root, manifestName))
	old := strings.Replace(data, `"version": 2`, `"version": 1`, 1)
	if err := os.WriteFile(filepath.Join(root, manifestName), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	c := open(t, root)
	if w := c.OpenWarnings(); len(w) > 0 {
		t.Errorf("a version-1 manifest gave warnings: %v", w)
	}
	if !c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Error("a version-1 manifest lost its sources")
	}
}
