package materialize

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/skill"
)

// sameFS is a version of a skill's files, named by key, that says of the
// files in same that they hold what they held in the version named
// before (as a git tree says by blob hashes).
type sameFS struct {
	countFS
	key, before string
	same        map[string]bool
}

func (s sameFS) ContentKey() string { return s.key }

func (s sameFS) SameContent(key, name string) bool { return key == s.before && s.same[name] }

// A changed skill's files that the source says did not change are taken
// from the cache's copy, not from the source, when that copy still has
// the stat data recorded; the skill's hash is what reading the source
// alone gives.
// A copy edited in the cache, a file whose mode changed and a hashing run
// read the source.
func TestChangedSkillReadsItsUnchangedFilesFromTheCache(t *testing.T) {
	t.Parallel()
	v1 := map[string]string{"SKILL.md": "---\nname: pdf\n---\nbody\n", "a.md": "alpha", "b.md": "beta", "run.sh": "#!/bin/sh\n"}
	v2 := map[string]string{"SKILL.md": v1["SKILL.md"], "a.md": "alpha", "b.md": "beta, edited", "run.sh": "#!/bin/sh\n"}
	unchanged := map[string]bool{"SKILL.md": true, "a.md": true, "run.sh": true}
	for _, tc := range []struct {
		name  string
		check Check
		// before changes the cache's copy after the first sync.
		before func(t *testing.T, live string)
		// plain: the source cannot tell what is unchanged.
		plain bool
		// mode, when set, is run.sh's mode in the second version.
		mode       fs.FileMode
		wantOpened []string
	}{
		{name: "unchanged files from the cache", wantOpened: []string{"b.md"}},
		{name: "a source that cannot tell", plain: true, wantOpened: []string{"SKILL.md", "a.md", "b.md", "run.sh"}},
		{name: "a copy edited in the cache", before: func(t *testing.T, live string) {
			if err := os.WriteFile(filepath.Join(live, "a.md"), []byte("ALPHA"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantOpened: []string{"a.md", "b.md"}},
		{name: "a copy removed from the cache", before: func(t *testing.T, live string) {
			if err := os.Remove(filepath.Join(live, "a.md")); err != nil {
				t.Fatal(err)
			}
		}, wantOpened: []string{"a.md", "b.md"}},
		{name: "a mode that changed", mode: 0o644, wantOpened: []string{"b.md", "run.sh"}},
		{name: "a hashing run", check: CheckHash, wantOpened: []string{"SKILL.md", "a.md", "b.md", "run.sh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			first := mkSkill("pdf", v1)
			first.Fingerprint = "k1"
			syncOnce(t, root, "1", first)
			if tc.before != nil {
				tc.before(t, filepath.Join(root, "src", "pdf"))
			}

			second := mkSkill("pdf", v2)
			if tc.mode != 0 {
				second.Files.(fstest.MapFS)["run.sh"].Mode = tc.mode
				second.List, _ = skill.ListFiles(second.Files, "pdf", 0)
			}
			want := hashAlone(t, second)
			var mu sync.Mutex
			var opened []string
			second.Fingerprint = "k2"
			counted := countFS{MapFS: second.Files.(fstest.MapFS), mu: &mu, opened: &opened}
			second.Files = counted
			if !tc.plain {
				second.Files = sameFS{countFS: counted, key: "k2", before: "k1", same: unchanged}
			}
			c, err := OpenCache(context.Background(), root, 0, tc.check) // CheckRecord unless set
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "2", Skills: []Skill{second}})
			if len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
			if err := c.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			slices.Sort(opened)
			opened = slices.Compact(opened)
			if !slices.Equal(opened, tc.wantOpened) {
				t.Errorf("opened from the source: %q, want %q", opened, tc.wantOpened)
			}
			if len(res.Changes) != 1 || res.Changes[0].After != want {
				t.Fatalf("changes = %+v, want the hash %s", res.Changes, want)
			}
			for p, data := range v2 {
				got, err := os.ReadFile(filepath.Join(root, "src", "pdf", p))
				if err != nil || string(got) != data {
					t.Errorf("%s in the cache: %q, %v; want %q", p, got, err, data)
				}
			}
			if tc.mode != 0 {
				info, err := os.Stat(filepath.Join(root, "src", "pdf", "run.sh"))
				if err != nil || info.Mode().Perm() != tc.mode {
					t.Errorf("run.sh: %v, %v; want mode %v", info, err, tc.mode)
				}
			}
		})
	}
}

// countFS notes the files opened from it, and can tell nothing of
// earlier versions.
type countFS struct {
	fstest.MapFS
	mu     *sync.Mutex
	opened *[]string
}

func (s countFS) Open(name string) (fs.File, error) {
	if name != "." {
		s.mu.Lock()
		*s.opened = append(*s.opened, name)
		s.mu.Unlock()
	}
	return s.MapFS.Open(name)
}

// hashAlone is the hash s gets synced into an empty cache.
func hashAlone(t *testing.T, s Skill) Hash {
	t.Helper()
	changes, _ := syncOnce(t, t.TempDir(), "1", s)
	if len(changes) != 1 {
		t.Fatalf("changes = %+v", changes)
	}
	return changes[0].After
}
