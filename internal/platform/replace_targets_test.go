package platform

// ReplaceFile against what may be at the target: a folder (empty or
// not), a link to a file or to a folder outside, nothing. Nothing a link
// leads to may change, and a refusal names both paths.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestReplaceFileOverWhatIsThere(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, to, outside string)
		refused bool
	}{
		{"missing", func(t *testing.T, to, outside string) {}, false},
		{"a file", func(t *testing.T, to, outside string) { write(t, to, "old") }, false},
		{"an empty folder", func(t *testing.T, to, outside string) {
			if err := os.Mkdir(to, 0o755); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a folder", func(t *testing.T, to, outside string) { write(t, filepath.Join(to, "x"), "X") }, true},
		{"a link to a file outside", func(t *testing.T, to, outside string) {
			if err := os.Symlink(filepath.Join(outside, "keep.txt"), to); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a link to a folder outside", func(t *testing.T, to, outside string) {
			if err := os.Symlink(outside, to); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a dangling link", func(t *testing.T, to, outside string) {
			if err := os.Symlink(filepath.Join(outside, "nothing"), to); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && strings.Contains(tc.name, "link") {
				t.Skip("links need privileges on Windows")
			}
			dir, outside := t.TempDir(), t.TempDir()
			write(t, filepath.Join(outside, "keep.txt"), "precious")
			from, to := filepath.Join(dir, "staged"), filepath.Join(dir, "live")
			write(t, from, "new")
			tc.setup(t, to, outside)
			err := ReplaceFile(from, to)
			if tc.refused {
				var le *os.LinkError
				if err == nil || !errors.As(err, &le) || le.New != to || le.Old != from {
					t.Fatalf("ReplaceFile = %v, want a refusal naming both paths", err)
				}
				if read(t, from) != "new" {
					t.Error("the staged file changed")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Lstat(from); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the old name is still there: %v", err)
				}
				info, err := os.Lstat(to)
				if err != nil || !info.Mode().IsRegular() || read(t, to) != "new" {
					t.Errorf("target after the replace: %v %v", info, err)
				}
			}
			entries, err := os.ReadDir(outside)
			if err != nil || len(entries) != 1 || read(t, filepath.Join(outside, "keep.txt")) != "precious" {
				t.Errorf("outside changed: %v %v", entries, err)
			}
		})
	}
}
