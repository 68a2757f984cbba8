//go:build unix

package materialize

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/platform"
)

// TestOpeningReleaseEndsTheStagingRemovalFirst: a cache left unclean
// starts removing what its staging holds as its writer is made. When the
// open then fails, or panics (the daemon recovers and goes on), what it
// took is let go: the removal must end before the cache's folder is
// closed, since it goes on through the folder's descriptor, whose number
// the next folder opened takes, and would remove there instead.
//
// Not parallel: another test opening a file could take the number first.
func TestOpeningReleaseEndsTheStagingRemovalFirst(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	root := filepath.Join(base, ".skills-cache")
	other := filepath.Join(base, "other") // the same names below it
	const n = 5000
	for _, dir := range []string{filepath.Join(root, stagingName), filepath.Join(other, stagingName)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("left-%05d", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(root, dirtyName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	held, err := flock.Acquire(ctx, filepath.Join(root, lockName), 0)
	if err != nil {
		t.Fatal(err)
	}
	o := &opening{held: held}
	if o.tree, err = platform.OpenTree(root); err != nil {
		t.Fatal(err)
	}
	if o.w, err = newWriterIn(o.tree, filepath.Join(root, stagingName), filepath.Join(root, dirtyName), 0); err != nil {
		t.Fatal(err)
	}
	o.release()
	// The next folders opened take the lowest free descriptors.
	for range 8 {
		tree, err := platform.OpenTree(other)
		if err != nil {
			t.Fatal(err)
		}
		defer tree.Close()
	}
	time.Sleep(200 * time.Millisecond)
	left, err := os.ReadDir(filepath.Join(other, stagingName))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != n {
		t.Errorf("%d of %d files left in another folder once a cache's open let go: the removal of the cache's staging went on there", len(left), n)
	}
	if gone, err := os.ReadDir(filepath.Join(root, stagingName)); err != nil || len(gone) != 0 {
		t.Errorf("the cache's staging after release: %d entries, %v; want emptied", len(gone), err)
	}
}
