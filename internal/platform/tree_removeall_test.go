package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestTreeRemoveAllOfABigFolder: a folder of more names than one batch
// of its listing (with a folder of as many inside) is removed whole, the
// listing begun again after each batch.
func TestTreeRemoveAllOfABigFolder(t *testing.T) {
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		for _, sub := range []string{"big", filepath.Join("big", "inner")} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 1300 {
				if err := os.WriteFile(filepath.Join(dir, sub, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := tr.RemoveAll("big"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "big")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("big is still there: %v", err)
		}
	})
}
