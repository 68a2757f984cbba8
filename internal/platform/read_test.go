package platform

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadRegular reads a file whole or not at all: every change between
// the caller's lstat and the read (growth, shrinking, another file, a
// link, a FIFO) is refused, with and without room in buf for the byte
// that shows the file's end.
func TestReadRegular(t *testing.T) {
	const content = "0123456789"
	cases := []struct {
		name string
		// change runs on the file at p after its lstat.
		change func(t *testing.T, p string)
		// room is the spare capacity of buf beyond the file's size.
		room int
		// keep links the file to f.keep before its lstat.
		keep bool
		ok   bool
	}{
		{name: "unchanged", room: 100, ok: true},
		{name: "unchanged, no room for a byte more", room: 0, ok: true},
		{name: "unchanged, room for one byte", room: 1, ok: true},
		{name: "grown", change: appendTo("x"), room: 100},
		{name: "grown, no room for a byte more", change: appendTo("x"), room: 0},
		{name: "grown by many bytes", change: appendTo(string(bytes.Repeat([]byte("y"), 64<<10))), room: 100},
		{name: "shrunk", change: truncate(4), room: 100},
		{name: "shrunk, no room", change: truncate(4), room: 0},
		{name: "replaced by another file of its size", change: replace(func(p string) error { return os.WriteFile(p, []byte("abcdefghij"), 0o644) }), room: 100},
		{name: "replaced by a link to its own content", change: replace(func(p string) error {
			other := p + ".other"
			if err := os.WriteFile(other, []byte(content), 0o644); err != nil {
				return err
			}
			return os.Symlink(other, p)
		}), room: 100},
		{name: "replaced by a FIFO", change: replace(Mkfifo), room: 100},
		// The link leads to the very inode lstat described: only not
		// following it refuses it.
		{name: "replaced by a link to itself, moved", change: replace(func(p string) error {
			if err := os.Link(p+".keep", p+".moved"); err != nil {
				return err
			}
			return os.Symlink(p+".moved", p)
		}), keep: true, room: 100},
		{name: "removed", change: func(t *testing.T, p string) { os.Remove(p) }, room: 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			write(t, p, content)
			if tc.keep {
				if err := os.Link(p, p+".keep"); err != nil {
					t.Skip(err)
				}
			}
			pre, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(t, p)
			}
			buf := make([]byte, len(content), len(content)+tc.room)
			done := make(chan bool, 1)
			var perm fs.FileMode
			var mtime time.Time
			go func() {
				var ok bool
				perm, mtime, ok = ReadRegular(p, pre, buf)
				done <- ok
			}()
			var ok bool
			select {
			case ok = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ReadRegular blocked")
			}
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if string(buf) != content {
				t.Errorf("read %q, want %q", buf, content)
			}
			if perm != pre.Mode().Perm() || !mtime.Equal(pre.ModTime()) {
				t.Errorf("perm %v, mtime %v; lstat said %v, %v", perm, mtime, pre.Mode().Perm(), pre.ModTime())
			}
		})
	}
	t.Run("a FIFO that lstat described", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "fifo")
		if err := Mkfifo(p); err != nil {
			t.Skip(err)
		}
		pre, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := ReadRegular(p, pre, make([]byte, 0, 10)); ok {
			t.Error("a FIFO was read as an empty file")
		}
	})
	t.Run("a buf of another size than lstat said", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "f")
		write(t, p, content)
		pre, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := ReadRegular(p, pre, make([]byte, len(content)-1, 100)); ok {
			t.Error("a buf one byte short was filled")
		}
	})
}

func appendTo(s string) func(t *testing.T, p string) {
	return func(t *testing.T, p string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
}

func truncate(n int64) func(t *testing.T, p string) {
	return func(t *testing.T, p string) {
		if err := os.Truncate(p, n); err != nil {
			t.Fatal(err)
		}
	}
}

// replace removes the file at p and has make put something else there.
func replace(make func(p string) error) func(t *testing.T, p string) {
	return func(t *testing.T, p string) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := make(p); err != nil {
			t.Skip(err)
		}
	}
}
