//go:build unix

package platform

import (
	"os"
	"path/filepath"
	"testing"
)

// Pin's promise: a call on a path directly in the pinned folder acts on
// the folder the path named when pinned, whatever is put at that path
// after. OpenFile keeps it only when its one-call open (openat2, Linux)
// fails: with a real folder put in the pinned one's place, a file
// created through the tree lands in the new folder, and the tree's
// Lstat and Rename of that very path then look in the folder pinned.
func TestTreePinnedFolderTakesTheFilesOpenedInIt(t *testing.T) {
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		if err := os.Mkdir(filepath.Join(dir, "staging"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := tr.Pin("staging"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "staging"), filepath.Join(dir, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "staging"), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := tr.OpenFile(filepath.Join("staging", "a"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if _, err := os.Lstat(filepath.Join(dir, "moved", "a")); err != nil {
			t.Errorf("the file created in the pinned folder is not there: %v", err)
		}
		if _, err := tr.Lstat(filepath.Join("staging", "a")); err != nil {
			t.Errorf("the tree cannot look at the file it just created: %v", err)
		}
	})
}
