package platform

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTreeRefusesDotDot: a path whose last component is ".." is local
// to the tree by its text (filepath.IsLocal), but resolved from the
// folder before it, it names that folder's parent: wherever that folder
// is by then, outside the tree if another process moved it there. Such
// a path, and any path that is not clean, is refused; RemoveAll of one
// does not empty the folder it names.
func TestTreeRefusesDotDot(t *testing.T) {
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		if err := os.Mkdir(filepath.Join(dir, "a"), 0o755); err != nil {
			t.Fatal(err)
		}
		keep := filepath.Join(dir, "keep")
		if err := os.WriteFile(keep, []byte("k"), 0o644); err != nil {
			t.Fatal(err)
		}
		up := "a" + string(filepath.Separator) + ".." // not Join, which cleans it away
		if err := tr.RemoveAll(up); err == nil {
			t.Errorf("RemoveAll(%q) = nil", up)
		}
		if err := tr.Chtimes(up, time.Unix(1, 0), time.Unix(1, 0)); err == nil {
			t.Errorf("Chtimes(%q) = nil", up)
		}
		if err := tr.SyncDir(up); err == nil {
			t.Errorf("SyncDir(%q) = nil", up)
		}
		if _, err := os.Lstat(keep); err != nil {
			t.Fatalf("a file of the tree is gone: %v", err)
		}
		if info, err := os.Stat(dir); err != nil || info.ModTime().Unix() == 1 {
			t.Fatalf("the tree's times were set: %v", err)
		}
	})
}
