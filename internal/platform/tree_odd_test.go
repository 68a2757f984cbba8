package platform

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestTreeOddNames: names with odd bytes (a newline, a backslash,
// bytes that are not UTF-8, 255 bytes long) and a path past PATH_MAX
// below the tree are made, written, renamed and removed as by path.
func TestTreeOddNames(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("these names are not Windows names")
	}
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		names := []string{"new\nline", `back\slash`, "\xff\xfe", strings.Repeat("n", 255), " lead", "-dash"}
		for _, n := range names {
			if err := tr.Mkdir(n, 0o755); err != nil {
				t.Fatalf("mkdir %q: %v", n, err)
			}
			f, err := tr.OpenFile(filepath.Join(n, n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				t.Fatalf("create %q: %v", n, err)
			}
			f.WriteString("x")
			f.Close()
			if err := tr.Rename(filepath.Join(n, n), filepath.Join(n, "moved")); err != nil {
				t.Fatalf("rename in %q: %v", n, err)
			}
			if data, err := os.ReadFile(filepath.Join(dir, n, "moved")); err != nil || string(data) != "x" {
				t.Fatalf("%q: %q %v", n, data, err)
			}
			if err := tr.RemoveAll(n); err != nil {
				t.Fatalf("remove %q: %v", n, err)
			}
		}
		// Deeper than PATH_MAX from the tree: each call resolves it.
		var parts []string
		for len(strings.Join(parts, "/")) < 5000 {
			parts = append(parts, strings.Repeat("d", 200))
			if err := tr.Mkdir(filepath.Join(parts...), 0o755); err != nil {
				t.Fatalf("mkdir at depth %d: %v", len(parts), err)
			}
		}
		deep := filepath.Join(append(parts, "f")...)
		f, err := tr.OpenFile(deep, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatalf("create past PATH_MAX: %v", err)
		}
		f.Close()
		if err := tr.Rename(deep, filepath.Join(parts[0], "up")); err != nil {
			t.Fatalf("rename from past PATH_MAX: %v", err)
		}
		if err := tr.RemoveAll(parts[0]); err != nil {
			t.Fatalf("remove past PATH_MAX: %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("left %d entries", len(entries))
		}
	})
}
