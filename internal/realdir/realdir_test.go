package realdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureAndCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(t *testing.T, root string) string // returns the dir to ask for
		want  error                                  // nil: Ensure makes or keeps a real directory
	}{
		{"missing, with missing parents", func(t *testing.T, root string) string { return filepath.Join(root, "a", "b", "c") }, nil},
		{"an existing directory", func(t *testing.T, root string) string {
			return mkdir(t, filepath.Join(root, "d"))
		}, nil},
		{"a link to a directory", func(t *testing.T, root string) string {
			link := filepath.Join(root, "link")
			must(t, os.Symlink(mkdir(t, filepath.Join(t.TempDir(), "elsewhere")), link))
			return link
		}, ErrSymlink},
		{"a dangling link", func(t *testing.T, root string) string {
			link := filepath.Join(root, "link")
			must(t, os.Symlink(filepath.Join(root, "nowhere"), link))
			return link
		}, ErrSymlink},
		{"a file", func(t *testing.T, root string) string {
			file := filepath.Join(root, "file")
			must(t, os.WriteFile(file, nil, 0o644))
			return file
		}, ErrNotDir},
		{"below a linked parent", func(t *testing.T, root string) string {
			link := filepath.Join(root, "skills")
			must(t, os.Symlink(mkdir(t, filepath.Join(t.TempDir(), "elsewhere")), link))
			return filepath.Join(link, ".audit")
		}, ErrSymlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tt.plant(t, t.TempDir())
			_, before := os.Lstat(dir)
			err := Ensure(dir)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Ensure = %v", err)
				}
				if err := Check(dir); err != nil {
					t.Errorf("Check after Ensure = %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), filepath.Dir(dir)) {
				t.Errorf("Ensure = %v, want %v naming the path", err, tt.want)
			}
			if _, after := os.Lstat(dir); (before == nil) != (after == nil) {
				t.Errorf("a refused Ensure made %s", dir)
			}
		})
	}
	if err := Check(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check of a missing dir = %v", err)
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
