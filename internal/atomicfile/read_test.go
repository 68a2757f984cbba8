package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/internal/platform"
)

// TestReadBounded: a file is read whole; a missing one, a link, a FIFO
// (without blocking) and a file over the limit are each told apart.
func TestReadBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadBounded(file, 5); err != nil || string(data) != "hello" {
		t.Errorf("read = %q, %v", data, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := platform.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		max  int64
		want error
	}{
		{filepath.Join(dir, "missing"), 5, fs.ErrNotExist},
		{link, 5, ErrSymlink},
		{fifo, 5, ErrNotRegular},
		{dir, 5, ErrNotRegular},
		{file, 4, ErrTooLarge},
	} {
		if _, err := ReadBounded(c.path, c.max); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.path, err, c.want)
		}
	}
}
