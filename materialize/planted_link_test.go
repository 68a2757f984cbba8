package materialize

// Links planted in a cached skill before a sync that changes the skill:
// the stager's map of real folders (st.dirs) and the patch's checks.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"testing/fstest"
)

// linksIn lists the symbolic links below dir.
func linksIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// A skill of files in several folders, one of which is replaced before a
// sync by a link to a folder outside the cache holding the same files;
// the sync changes a file in another folder (or below the link). After
// it, nothing outside changed, no link is left in the skill, and the
// skill holds the new version: with every check, and whether or not the
// source tells which files did not change ("same", reused unread, or
// "plain", compared through the link).
func TestAPlantedFolderLinkGoesWithTheSkillsNextChange(t *testing.T) {
	t.Parallel()
	old := map[string]string{"SKILL.md": "s", "a/x.md": "x", "a/deep/z.md": "z", "b/y.md": "y", "b/keep.md": "k"}
	for _, check := range []Check{CheckRecord, CheckStat, CheckHash} {
		for _, src := range []string{"plain", "same"} {
			for _, tc := range []struct {
				name   string
				linked string // folder of the skill replaced by a link
				change func(m map[string]string)
			}{
				{"edit in a real folder beside a link", "a", func(m map[string]string) { m["b/y.md"] = "y v2" }},
				{"add to a real folder beside a link", "a", func(m map[string]string) { m["b/new.md"] = "n" }},
				{"remove from a real folder beside a link", "a", func(m map[string]string) { delete(m, "b/keep.md") }},
				{"edit above a nested link", "a/deep", func(m map[string]string) { m["a/x.md"] = "x v2" }},
				{"edit beside a nested link", "a/deep", func(m map[string]string) { m["b/y.md"] = "y v2" }},
				{"edit below a nested link", "a/deep", func(m map[string]string) { m["a/deep/z.md"] = "z v2" }},
				{"edit at the top", "a", func(m map[string]string) { m["SKILL.md"] = "s v2" }},
			} {
				t.Run(fmt.Sprintf("%d/%s/%s", check, src, tc.name), func(t *testing.T) {
					t.Parallel()
					root, outside := t.TempDir(), t.TempDir()
					first := mkSkill("k", old)
					first.Fingerprint = "k1"
					syncOnce(t, root, "r1", first)
					live := filepath.Join(root, "src", "k")
					// The outside folder holds what the linked folder held.
					for p, v := range old {
						rel, err := filepath.Rel(tc.linked, p)
						if err != nil || rel == ".." || filepath.IsAbs(rel) || rel[:min(3, len(rel))] == "../" {
							continue
						}
						dst := filepath.Join(outside, rel)
						if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(dst, []byte(v), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					linked := filepath.Join(live, filepath.FromSlash(tc.linked))
					if err := os.RemoveAll(linked); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(outside, linked); err != nil {
						t.Fatal(err)
					}
					outsideBefore, _ := tree(t, outside)

					want := map[string]string{}
					for p, v := range old {
						want[p] = v
					}
					tc.change(want)
					second := mkSkill("k", want)
					second.Fingerprint = "k2"
					if src == "same" {
						same := map[string]bool{}
						for p, v := range want {
							if old[p] == v {
								same[p] = true
							}
						}
						var mu sync.Mutex
						var opened []string
						second.Files = sameFS{countFS: countFS{MapFS: second.Files.(fstest.MapFS), mu: &mu, opened: &opened}, key: "k2", before: "k1", same: same}
					}
					c := openCheck(t, root, check)
					res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r2", Skills: []Skill{second}})
					if len(res.Errors) > 0 {
						t.Fatal(res.Errors)
					}
					if err := c.Commit(context.Background()); err != nil {
						t.Fatal(err)
					}
					c.Close()
					if got, _ := tree(t, outside); !reflect.DeepEqual(got, outsideBefore) {
						t.Errorf("outside the cache went from %v to %v", outsideBefore, got)
					}
					if links := linksIn(t, live); len(links) > 0 {
						t.Errorf("the planted link is still in the cache after a sync that changed the skill: %v", links)
					}
					if got, _ := tree(t, live); !reflect.DeepEqual(got, want) {
						t.Errorf("live holds %v, want %v", got, want)
					}
				})
			}
		}
	}
}
