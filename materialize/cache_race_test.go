package materialize

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestCacheParentSwappedAfterOpen: the workspace folder holding the
// cache swapped for a link to a folder elsewhere by another process
// once OpenCache has looked at the cache and locked it: the skills
// staged, swapped in, patched and kept, the records, the manifest and
// the mark all go into the cache folder that was opened. Nothing changes
// where the link leads, even where that folder is a copy of the cache,
// so that what the sync reads by path there looks as it should.
func TestCacheParentSwappedAfterOpen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves the cache by path (docs/platforms.md)")
	}
	t.Parallel()
	v1 := map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n", "ref/a.md": "a", "ref/b.md": "b"}
	beta := map[string]string{"SKILL.md": "b"}
	cases := []struct {
		name          string
		before, after []Skill
		// kept is set where a patch replaces a file: the old one is kept
		// in the staging of the cache opened, to be written into again.
		kept bool
	}{
		{"a first sync", nil, []Skill{mkSkill("alpha", v1), mkSkill("beta", beta)}, false},
		{"an update and a removal", []Skill{mkSkill("alpha", v1), mkSkill("beta", beta)},
			[]Skill{mkSkill("alpha", map[string]string{"SKILL.md": "v2", "ref/a.md": "a2", "new.md": "n"})}, false},
		{"one file patched", []Skill{mkSkill("alpha", v1)},
			[]Skill{mkSkill("alpha", map[string]string{"SKILL.md": v1["SKILL.md"], "ref/a.md": "a3", "ref/b.md": "b"})}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ws, outside := t.TempDir(), t.TempDir()
			parent := filepath.Join(ws, "a")
			root := filepath.Join(parent, ".skills-cache")
			there := filepath.Join(outside, ".skills-cache")
			if c.before != nil {
				syncOnce(t, root, "r1", c.before...)
			}
			cache, err := OpenCache(ctx, root, time.Second, CheckRecord)
			if err != nil {
				t.Fatal(err)
			}
			// Where the link will lead, a copy of the cache.
			copyTree(t, root, there)
			before := snapshot(t, outside)
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
			if after := snapshot(t, outside); !maps.Equal(before, after) {
				t.Fatalf("changed where the link leads:\nbefore %v\nafter  %v", before, after)
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
			if c.kept {
				kept, _ := filepath.Glob(filepath.Join(real, stagingName, "*"+patchSuffix))
				if len(kept) != 1 {
					t.Errorf("the file the patch replaced is not kept in staging: %v", kept)
				}
			}
		})
	}
}

// copyTree copies the folder from to to: folders, files with their
// modes, links as links.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(dst, info.Mode().Perm())
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, info.Mode().Perm())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot is what the folder dir holds: each entry's kind, mode, times
// and content (a link's target).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		v := fmt.Sprintf("%v %d", info.Mode(), info.ModTime().UnixNano())
		switch {
		case info.IsDir():
			v = info.Mode().String() // a folder's mtime changes with its entries
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		default:
			data, _ := os.ReadFile(p)
			v += " " + string(data)
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
