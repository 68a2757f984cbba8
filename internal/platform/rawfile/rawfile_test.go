//go:build unix

package rawfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "setting")
	if err := os.WriteFile(path, []byte("always [madvise] never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		size       int
		want       string
	}{
		{"whole", path, 128, "always [madvise] never\n"},
		{"cut to the buffer", path, 6, "always"},
		{"missing", filepath.Join(dir, "missing"), 128, ""},
		{"a folder", dir, 128, ""},
		{"empty", os.DevNull, 128, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Read(tt.path, make([]byte, tt.size)); got != tt.want {
				t.Errorf("Read(%s) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}
