package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// The writes below a Tree do what the writes by path do, in the folder
// held: the file replaced with its mode, no temporary file left, a killed
// writer's old temporary swept, a link at the name refused, and a folder
// on the way swapped for a link after the tree was opened not written
// through.
func TestWritesBelowATree(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, root, outside string) // before the write
		want  error                                    // nil: written
	}{
		{"a new file", func(*testing.T, string, string) {}, nil},
		{"over a file, a killed writer's temporary beside it", func(t *testing.T, root, _ string) {
			old := filepath.Join(root, "sub", tempPrefix("f.json")+"dead")
			mustWrite(t, filepath.Join(root, "sub", "f.json"), "old")
			mustWrite(t, old, "x")
			past := time.Now().Add(-2 * LeftoverAge)
			if err := os.Chtimes(old, past, past); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"a link at the name", func(t *testing.T, root, outside string) {
			if err := os.Symlink(filepath.Join(outside, "f.json"), filepath.Join(root, "sub", "f.json")); err != nil {
				t.Fatal(err)
			}
		}, ErrSymlink},
		{"the folder on the way swapped for a link", func(t *testing.T, root, outside string) {
			if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "sub.moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "sub")); err != nil {
				t.Fatal(err)
			}
		}, platform.ErrLinkOnPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if runtime.GOOS == "windows" && tt.want != nil {
				t.Skip("Windows resolves a Tree's paths by path (docs/platforms.md)")
			}
			root, outside := t.TempDir(), t.TempDir()
			if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			tree, err := platform.OpenTree(root)
			if err != nil {
				t.Fatal(err)
			}
			defer tree.Close()
			tt.setup(t, root, outside)
			rel := filepath.Join("sub", "f.json")
			err = WriteJSONIfChangedIn(tree, rel, map[string]int{"a": 1}, 0o640)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("WriteJSONIfChangedIn = %v, want %v", err, tt.want)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("written outside: %s", entries[0].Name())
			}
			if tt.want != nil {
				return
			}
			data, info, err := ReadBoundedIn(tree, rel, 1<<10)
			if err != nil || string(data) != "{\n  \"a\": 1\n}\n" || info.Mode().Perm() != 0o640 && runtime.GOOS != "windows" {
				t.Errorf("ReadBoundedIn = %q, %v, %v", data, info, err)
			}
			entries, _ := os.ReadDir(filepath.Join(root, "sub"))
			if len(entries) != 1 {
				t.Errorf("the folder holds %d entries, want the file alone", len(entries))
			}
		})
	}
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
