package repository

import (
	"path"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/skill"
)

// listedEntriesBySet is listedEntries as a set of folders counts it, the
// way it was written first: the reference the path-order count must meet.
func listedEntriesBySet(files []skill.File) int {
	dirs := map[string]bool{}
	n, top := 0, 0
	for _, f := range files {
		n++
		if !strings.Contains(f.Path, "/") {
			top++
		}
		for p := path.Dir(f.Path); p != "." && !dirs[p]; p = path.Dir(p) {
			dirs[p] = true
			n++
			if !strings.Contains(p, "/") {
				top++
			}
		}
	}
	return n + top + 2 + len(dirs)
}

func TestListedEntriesCountsEachFolderOnce(t *testing.T) {
	t.Parallel()
	for _, paths := range [][]string{
		{"SKILL.md"},
		{"SKILL.md", "a/b/c.md", "a/b/d.md", "a/e.md"},
		{"SKILL.md", "a/b.md", "a/b/c.md", "a/b0.md", "a-b/c.md", "ab/c.md"},
		{"x/y/z/w.md", "x/y.md", "SKILL.md", "x/y/z.md", "x/y/z/v.md"}, // not in path order
		{"scripts/run.sh", "references/one.md", "references/two/three.md", "SKILL.md", "assets/a/b/c/d.png"},
	} {
		var files []skill.File
		for _, p := range paths {
			files = append(files, skill.File{Path: p})
		}
		if got, want := listedEntries(files), listedEntriesBySet(files); got != want {
			t.Errorf("%q: listedEntries = %d, want %d", paths, got, want)
		}
	}
}
