package git

// Tests of the tree entry index (treeCache.entry) through a real fetch
// and TreeFS: hostile trees written byte for byte with git hash-object
// --literally (duplicate names in either order, unsorted entries, names
// differing in case), small (scanned) and large (indexed), from many
// goroutines at once; and a tree the cache does not keep.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
)

// rawTree is one entry of a tree object written as it is, in its order.
type rawTree struct{ mode, name, hash string }

// writeRawTree writes a tree object holding entries in the order given,
// with no sorting and no check of duplicates, and returns its hash.
func writeRawTree(t *testing.T, r *gittest.Repo, entries []rawTree) string {
	t.Helper()
	var b strings.Builder
	for _, e := range entries {
		raw, err := hex.DecodeString(e.hash)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(raw)
	}
	cmd := exec.Command("git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	cmd.Dir = r.Dir
	cmd.Stdin = strings.NewReader(b.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object --literally: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// hostileFS fetches a repository whose skills/ folder is entries and
// returns the FS of its root.
func hostileFS(t *testing.T, up *gittest.Repo, skills []rawTree) *TreeFS {
	t.Helper()
	tree := writeRawTree(t, up, skills)
	up.CommitTree("main", "hostile", "040000 tree "+tree+"\tskills")
	return fetchedFS(t, up)
}

// fetchedFS fetches up's main branch into a store of its own and returns
// the FS of its root.
func fetchedFS(t *testing.T, up *gittest.Repo) *TreeFS {
	t.Helper()
	g := NewGit(GitConfig{Source: "team", URL: up.URL(), Depth: 1, Timeout: 30 * time.Second, StoreRoot: t.TempDir()}, repository.Options{MaxFileSize: 1 << 20})
	if _, err := g.Fetch(context.Background()); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	root, err := g.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// lookupResult is what a TreeFS says of a path, as a string to compare.
func lookupResult(fsys fs.FS, name string) string {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "missing"
		default:
			return "error: " + err.Error()
		}
	}
	if info.IsDir() {
		return "dir"
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "read error: " + err.Error()
	}
	return "file " + string(data)
}

func TestTreeEntryIndexOfHostileTreesAnswersAsAScan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		dirFirst  bool
		fillers   int
		wantDup   string
		wantInDup string
	}{
		{"file first, scanned", false, 2, "file FILE", "missing"},
		{"file first, indexed", false, 2 * indexFrom, "file FILE", "missing"},
		{"folder first, scanned", true, 2, "dir", "file INNER"},
		{"folder first, indexed", true, 2 * indexFrom, "dir", "file INNER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := gittest.NewRepo(t, "main")
			file := up.Blob("FILE")
			inner := up.MkTree("100644 blob " + up.Blob("INNER") + "\tx")
			var entries []rawTree
			dupFile := rawTree{"100644", "dup", file}
			dupDir := rawTree{"40000", "dup", inner}
			// Unsorted: z first, then fillers in reverse, then names that
			// differ only in case.
			entries = append(entries, rawTree{"100644", "zzz", up.Blob("ZZZ")})
			if tc.dirFirst {
				entries = append(entries, dupDir, dupFile)
			} else {
				entries = append(entries, dupFile, dupDir)
			}
			filler := up.Blob("F")
			for i := tc.fillers - 1; i >= 0; i-- {
				entries = append(entries, rawTree{"100644", fmt.Sprintf("f%04d", i), filler})
			}
			entries = append(entries, rawTree{"100644", "Case", up.Blob("UPPER")}, rawTree{"100644", "case", up.Blob("lower")})
			// A third "dup", a link, last: never found.
			entries = append(entries, rawTree{"120000", "dup", up.Blob("zzz")})
			root := hostileFS(t, up, entries)

			want := map[string]string{
				"skills/dup":   tc.wantDup,
				"skills/dup/x": tc.wantInDup,
				"skills/zzz":   "file ZZZ",
				"skills/Case":  "file UPPER",
				"skills/case":  "file lower",
				"skills/CASE":  "missing",
				"skills/f0000": "file F",
				"skills/nope":  "missing",
			}
			var wg sync.WaitGroup
			errs := make(chan string, 64*len(want))
			for range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for name, w := range want {
						if got := lookupResult(root, name); got != w {
							errs <- fmt.Sprintf("%s: %s, want %s", name, got, w)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
				break
			}
			indexed := len(root.trees.indexes) > 0
			if indexed != (tc.fillers >= indexFrom) {
				t.Errorf("indexed %v with %d fillers", indexed, tc.fillers)
			}
		})
	}
}

// Once the tree cache is full, a large tree is decoded again at each
// lookup: one index serves every read of it (an index by the tree read
// built one for every lookup, and kept each tree alive).
func TestTreeEntryIndexServesEveryReadOfATree(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	for i := range 100 {
		up.Skill(fmt.Sprintf("skills/s%03d", i), fmt.Sprintf("Skill %d.", i))
	}
	up.Commit("many")
	root := fetchedFS(t, up)
	// The tree cache is full (a repository of some 10,000 skills fills it).
	root.trees.entries = maxCachedEntries
	const lookups = 50
	for i := range lookups {
		if _, err := fs.Stat(root, fmt.Sprintf("skills/s%03d/SKILL.md", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(root.trees.indexes); n > 1 {
		t.Errorf("%d lookups left %d indexes (%d entries counted), each holding a tree the cache did not keep", lookups, n, root.trees.indexed)
	}
}
