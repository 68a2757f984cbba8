package git_test

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/git"
)

// A store left in a bad state is rebuilt by the next fetch, which says so
// in a warning, and the source reads as before.
func TestGitRebuildsDamagedStore(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(t *testing.T, store string){
		"empty ref file": func(t *testing.T, store string) {
			if err := os.Truncate(filepath.Join(store, "refs", "skillsync", "default"), 0); err != nil {
				t.Fatal(err)
			}
		},
		"ref to a missing commit": func(t *testing.T, store string) {
			skilltest.WriteFile(t, filepath.Join(store, "refs", "skillsync", "default"), strings.Repeat("ab", 20)+"\n")
		},
		"objects gone": func(t *testing.T, store string) {
			packs, _ := filepath.Glob(filepath.Join(store, "objects", "pack", "pack-*"))
			for _, p := range packs {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		},
		"corrupt index": func(t *testing.T, store string) {
			idx, _ := filepath.Glob(filepath.Join(store, "objects", "pack", "pack-*.idx"))
			for _, p := range idx {
				os.Chmod(p, 0o644)
				if err := os.Truncate(p, 100); err != nil {
					t.Fatal(err)
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			up := gittest.NewRepo(t, "main")
			// The commit Skill and Commit make, packed by one git
			// fast-import: each fetch reads the refs from the files.
			head := up.ImportCommit("main", "one", map[string]gittest.File{"skills/one/SKILL.md": {Data: skilltest.SkillMD("one", "First.")}})
			g := newGit(t, up.URL(), "")
			fetch(t, g)
			damage(t, g.StoreDir())
			res, err := g.Fetch(context.Background())
			if err != nil {
				t.Fatalf("fetch of a damaged store: %v", err)
			}
			if string(res.Revision) != head || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "damaged") {
				t.Errorf("result = %+v, want %s and one warning", res, head)
			}
			if got := names(t, g); !slices.Equal(got, []string{"one"}) {
				t.Errorf("skills after the rebuild = %v", got)
			}
			if res := fetch(t, g); len(res.Warnings) != 0 {
				t.Errorf("a sound store warned: %v", res.Warnings)
			}
		})
	}
}

// What an interrupted fetch leaves in the store is removed by the next.
func TestGitRemovesLeftoversOfInterruptedFetches(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	left := []string{"objects/pack/tmp_pack_123", "objects/pack/tmp_idx_456", "objects/tmp_obj_789"}
	for _, name := range left {
		skilltest.WriteFile(t, filepath.Join(g.StoreDir(), name), "half a pack")
	}
	up.Skill("skills/two", "Second.")
	up.Commit("two")
	fetch(t, g)
	for _, name := range left {
		if _, err := os.Stat(filepath.Join(g.StoreDir(), name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", name, err)
		}
	}
}

// A download stopped half way (here by max_source_size; a full disk takes
// the same path) ends the fetch at once: a file:// remote's upload-pack,
// blocked writing to a pipe nobody reads any more, is not waited for. The
// store keeps its last good revision and no temporary file.
func TestGitStoppedDownloadEndsAndKeepsTheStore(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	first := up.Commit("one")
	g := newGit(t, up.URL(), "main", func(c *git.GitConfig) { c.MaxFetchSize = 256 << 10 })
	fetch(t, g)
	// 4 MiB that do not compress: far more than a pipe holds.
	noise := up.BlobFrom(io.LimitReader(rand.New(rand.NewSource(1)), 4<<20))
	up.Git("update-index", "--add", "--cacheinfo", "100644,"+noise+",skills/one/noise.bin")
	up.Git("commit", "-q", "-m", "noise")

	errc := make(chan error, 1)
	go func() {
		_, err := g.Fetch(context.Background())
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, git.ErrSourceTooLarge) {
			t.Errorf("err = %v, want ErrSourceTooLarge", err)
		}
	case <-time.After(2 * time.Minute): // generous: only a hang gets here
		t.Fatal("the fetch waited for upload-pack")
	}
	if cur, err := g.Current(context.Background()); err != nil || string(cur) != first {
		t.Errorf("Current = %s, %v; want the last good %s", cur, err, first)
	}
	if left, _ := filepath.Glob(filepath.Join(g.StoreDir(), "objects", "pack", "tmp_*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
