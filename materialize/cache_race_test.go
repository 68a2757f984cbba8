package materialize

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestCacheParentSwappedAfterOpen: the workspace folder holding the
// cache swapped for a link to a folder elsewhere by another process
// once OpenCache has looked at the cache and locked it: the skills
// staged, swapped in and removed, the records, the manifest and the
// mark all go into the cache folder that was opened. Nothing lands
// where the link leads.
func TestCacheParentSwappedAfterOpen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves the cache by path (docs/platforms.md)")
	}
	t.Parallel()
	v1 := map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n", "ref/a.md": "a", "ref/b.md": "b"}
	cases := []struct {
		name          string
		before, after []Skill
	}{
		{"a first sync", nil, []Skill{mkSkill("alpha", v1), mkSkill("beta", map[string]string{"SKILL.md": "b"})}},
		{"an update and a removal", []Skill{mkSkill("alpha", v1), mkSkill("beta", map[string]string{"SKILL.md": "b"})},
			[]Skill{mkSkill("alpha", map[string]string{"SKILL.md": "v2", "ref/a.md": "a2", "new.md": "n"})}},
		{"one file patched", []Skill{mkSkill("alpha", v1)},
			[]Skill{mkSkill("alpha", map[string]string{"SKILL.md": v1["SKILL.md"], "ref/a.md": "a3", "ref/b.md": "b"})}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ws, outside := t.TempDir(), t.TempDir()
			parent := filepath.Join(ws, "a")
			root := filepath.Join(parent, ".skills-cache")
			there := filepath.Join(outside, ".skills-cache")
			if err := os.MkdirAll(there, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.before != nil {
				syncOnce(t, root, "r1", c.before...)
			}
			cache, err := OpenCache(ctx, root, time.Second, CheckRecord)
			if err != nil {
				t.Fatal(err)
			}
			moved := parent + "-moved"
			if err := os.Rename(parent, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, parent); err != nil {
				t.Fatal(err)
			}
			res := cache.SyncSource(ctx, Source{Name: "src", Revision: "r2", Skills: c.after})
			if len(res.Errors) > 0 {
				t.Errorf("errors: %v", res.Errors)
			}
			if err := cache.Commit(ctx); err != nil {
				t.Error(err)
			}
			cache.Close()
			var landed []string
			filepath.Walk(outside, func(p string, _ os.FileInfo, _ error) error {
				if p != outside && p != there {
					landed = append(landed, p)
				}
				return nil
			})
			if len(landed) > 0 {
				t.Fatalf("written where the link leads: %v", landed)
			}
			real := filepath.Join(moved, ".skills-cache")
			for _, s := range c.after {
				data, err := os.ReadFile(filepath.Join(real, "src", s.Name, "SKILL.md"))
				if err != nil || len(data) == 0 {
					t.Errorf("%s not in the cache opened: %v", s.Name, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(real, manifestName)); err != nil {
				t.Errorf("no manifest in the cache opened: %v", err)
			}
		})
	}
}
