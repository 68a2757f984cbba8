//go:build linux

package repository_test

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/repositorytest"
)

// A file swapped for a symbolic link to an outside secret, back and forth,
// while the source is read: no read may ever return the secret. Resolving
// a path and then opening it by name lets the swap land in between.
func TestDirFSSwapToOutsideLinkNeverLeaks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	must(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
	root := t.TempDir()
	repositorytest.WriteTree(t, root, map[string]repositorytest.File{"skill/SKILL.md": {Data: "---\nname: skill\ndescription: d\n---\n"}})
	// A deeper name widens the window between resolving a name and
	// opening it, so the race shows within a few thousand reads.
	name := "skill/a/b/c/d/e/f/g/h/data.txt"
	must(t, os.MkdirAll(filepath.Join(root, filepath.FromSlash(path.Dir(name))), 0o755))
	target := filepath.Join(root, filepath.FromSlash(name))
	must(t, os.WriteFile(target, []byte("inside"), 0o644))

	fsys, err := repository.NewDirFS(root)
	if err != nil {
		t.Fatal(err)
	}
	link := target + ".link"
	must(t, os.Symlink(secret, link))
	if err := platform.Exchange(target, link); err != nil {
		t.Skipf("no atomic exchange to race with here: %v", err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// One exchange flips the name between the regular file and
			// the link, atomically: a reader never sees it missing.
			_ = platform.Exchange(target, link)
		}
	}()
	const readers, reads = 2, 10000
	var leaks, opened atomic.Int64
	var rg sync.WaitGroup
	for r := 0; r < readers; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for i := 0; i < reads; i++ {
				f, err := fsys.Open(name)
				if err != nil {
					continue
				}
				data, _ := io.ReadAll(f)
				f.Close()
				opened.Add(1)
				if string(data) == "SECRET" {
					leaks.Add(1)
				}
			}
		}()
	}
	rg.Wait()
	stop.Store(true)
	wg.Wait()
	if n := leaks.Load(); n > 0 {
		t.Fatalf("%d of %d reads returned the file outside the source", n, readers*reads)
	}
	if opened.Load() == 0 {
		t.Fatal("no read succeeded: the test did not exercise the race")
	}
}
