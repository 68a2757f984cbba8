//go:build unix

package materialize

import (
	"os"
	"path/filepath"
	"testing"
)

// Staging is looked at by name through a folder held open only when it
// is a folder itself: a link planted in its place, or a file, is not
// opened, and takeFile looks by whole path (then openKept's check that
// the file is the one looked at holds as before).
func TestStagingIsHeldOpenOnlyWhenItIsAFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		open bool
	}{
		{"real", true},
		{"link", false},
		{"file", false},
		{"missing", false},
	} {
		r := openRootDir(filepath.Join(root, tc.name))
		if got := r != nil; got != tc.open {
			t.Errorf("%s: held open %v, want %v", tc.name, got, tc.open)
		}
		if r != nil {
			r.Close()
		}
	}
}
