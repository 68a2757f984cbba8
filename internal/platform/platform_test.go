package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// renameCases runs the cases every rename-without-replace must pass, the
// system's and the portable fallback alike.
func renameCases(t *testing.T, rename func(from, to string) error) {
	t.Run("file to a free name", func(t *testing.T) {
		dir := t.TempDir()
		from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		write(t, from, "A")
		if err := rename(from, to); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(from); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the old name is still there: %v", err)
		}
		if got := read(t, to); got != "A" {
			t.Errorf("moved file holds %q", got)
		}
	})
	t.Run("file onto a file", func(t *testing.T) {
		dir := t.TempDir()
		from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		write(t, from, "A")
		write(t, to, "B")
		err := rename(from, to)
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("rename over a file = %v, want fs.ErrExist", err)
		}
		if read(t, from) != "A" || read(t, to) != "B" {
			t.Error("a refused rename changed a file")
		}
	})
	t.Run("directory to a free name", func(t *testing.T) {
		dir := t.TempDir()
		from, to := filepath.Join(dir, "d"), filepath.Join(dir, "e")
		write(t, filepath.Join(from, "f"), "F")
		if err := rename(from, to); err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(to, "f")); got != "F" {
			t.Errorf("moved directory holds %q", got)
		}
		if _, err := os.Lstat(from); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the old name is still there: %v", err)
		}
	})
	t.Run("directory onto an empty directory", func(t *testing.T) {
		// Plain rename(2) replaces an empty directory: this one must not.
		dir := t.TempDir()
		from, to := filepath.Join(dir, "d"), filepath.Join(dir, "e")
		write(t, filepath.Join(from, "f"), "F")
		if err := os.Mkdir(to, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := rename(from, to); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("rename over an empty directory = %v, want fs.ErrExist", err)
		}
		if read(t, filepath.Join(from, "f")) != "F" {
			t.Error("the source directory changed")
		}
		if entries, _ := os.ReadDir(to); len(entries) != 0 {
			t.Errorf("the target directory changed: %v", entries)
		}
	})
	t.Run("directory onto a link", func(t *testing.T) {
		dir := t.TempDir()
		from, to := filepath.Join(dir, "d"), filepath.Join(dir, "e")
		write(t, filepath.Join(from, "f"), "F")
		if err := os.Symlink(t.TempDir(), to); err != nil {
			t.Skipf("no symbolic links: %v", err)
		}
		if err := rename(from, to); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("rename over a link = %v, want fs.ErrExist", err)
		}
	})
	t.Run("missing source", func(t *testing.T) {
		dir := t.TempDir()
		err := rename(filepath.Join(dir, "none"), filepath.Join(dir, "b"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("rename of nothing = %v, want fs.ErrNotExist", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "b")); !errors.Is(err, fs.ErrNotExist) {
			t.Error("a failed rename left its target behind")
		}
	})
}

func TestRenameNoReplace(t *testing.T) { renameCases(t, RenameNoReplace) }

// TestRenameNoReplaceByLink forces the portable fallback (link and
// unlink for files, an exclusive mkdir and a rename for directories) that
// systems without the flag use.
func TestRenameNoReplaceByLink(t *testing.T) { renameCases(t, RenameNoReplaceByLink) }

func TestExchange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, filepath.Join(a, "f"), "A")
	write(t, filepath.Join(b, "f"), "B")
	err := Exchange(a, b)
	if errors.Is(err, ErrNoExchange) {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
			t.Logf("this file system has no exchange: %v", err)
		}
		t.Skip("no atomic exchange here")
	}
	if err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(a, "f")) != "B" || read(t, filepath.Join(b, "f")) != "A" {
		t.Error("the two directories were not swapped")
	}
	if err := Exchange(a, filepath.Join(dir, "none")); err == nil || errors.Is(err, ErrNoExchange) {
		t.Errorf("exchange with a missing path = %v, want an error of its own", err)
	}
}

func TestOpenFileNeverFollowsALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "secret")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_TRUNC, os.O_WRONLY | os.O_CREATE | os.O_APPEND, os.O_RDWR | os.O_CREATE | os.O_EXCL} {
		f, err := OpenFile(link, flag, 0o644)
		if err == nil {
			f.Close()
			t.Errorf("flag %#x: a link was opened", flag)
			continue
		}
		if flag&os.O_EXCL != 0 {
			if !errors.Is(err, fs.ErrExist) && !errors.Is(err, ErrLink) {
				t.Errorf("flag %#x: %v, want fs.ErrExist or ErrLink", flag, err)
			}
			continue
		}
		if !errors.Is(err, ErrLink) {
			t.Errorf("flag %#x: %v, want ErrLink", flag, err)
		}
	}
	if got := read(t, secret); got != "secret" {
		t.Errorf("the link's target was changed: %q", got)
	}
	plain := filepath.Join(dir, "plain")
	f, err := OpenFile(plain, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("ok")
	f.Close()
	if read(t, plain) != "ok" {
		t.Error("a plain file was not written")
	}
}

func TestOpenFileDoesNotWaitOnAFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := Mkfifo(fifo); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no FIFOs here")
	} else if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := OpenFile(fifo, os.O_RDONLY, 0)
		if err == nil {
			info, serr := f.Stat()
			if serr == nil && info.Mode().IsRegular() {
				serr = errors.New("a FIFO stats as a regular file")
			}
			f.Close()
			err = serr
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO waited for a writer")
	}
}

func TestOpenDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	write(t, filepath.Join(real, "f"), "F")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
	if d, err := OpenDir(link); !errors.Is(err, ErrLink) {
		if err == nil {
			d.Close()
		}
		t.Fatalf("OpenDir(link) = %v, want ErrLink", err)
	}
	if _, err := OpenDir(filepath.Join(real, "f")); err == nil {
		t.Error("a file was opened as a directory")
	}
	d, err := OpenDir(real)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, err := d.OpenFile("g", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("G")
	f.Close()
	if read(t, filepath.Join(real, "g")) != "G" {
		t.Error("a file beneath the directory was not written")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	write(t, secret, "secret")
	if err := os.Symlink(secret, filepath.Join(real, "planted")); err != nil {
		t.Fatal(err)
	}
	if f, err := d.OpenFile("planted", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); !errors.Is(err, ErrLink) {
		if err == nil {
			f.Close()
		}
		t.Errorf("a planted link beneath the directory: %v, want ErrLink", err)
	}
	// The directory swapped for a link after it was opened: files are
	// still made in the directory that was opened, never through the link.
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(real, moved); err != nil {
		t.Skipf("an open directory cannot be renamed here: %v", err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, real); err != nil {
		t.Fatal(err)
	}
	if f, err := d.OpenFile("h", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		f.Close()
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "h")); err == nil {
		t.Error("a file was made through the link swapped in for the directory")
	}
}

func TestTryLock(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer b.Close()
	if err := TryLock(a, true); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b, true); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("second exclusive lock = %v, want ErrWouldBlock", err)
	}
	if err := TryLock(b, false); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("shared lock beside an exclusive one = %v, want ErrWouldBlock", err)
	}
	a.Close()
	if err := TryLock(b, false); err != nil {
		t.Fatalf("shared lock once the holder closed: %v", err)
	}
	c := open()
	defer c.Close()
	if err := TryLock(c, false); err != nil {
		t.Errorf("two shared locks: %v", err)
	}
	if err := TryLock(c, true); !errors.Is(err, ErrWouldBlock) {
		t.Errorf("exclusive lock beside a shared one = %v, want ErrWouldBlock", err)
	}
}

func TestFileKeyAndChangeTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, a, "A")
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "c"), "C")
	key := func(p string) (uint64, uint64, bool) {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return FileKey(info)
	}
	da, ia, ok := key(a)
	if !ok {
		t.Skip("no file keys here")
	}
	db, ib, _ := key(b)
	_, ic, _ := key(filepath.Join(dir, "c"))
	if da != db || ia != ib || ia == ic {
		t.Errorf("keys: a %d:%d, its link %d:%d, another file inode %d", da, ia, db, ib, ic)
	}
	info, _ := os.Lstat(a)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(a, old, old); err != nil {
		t.Fatal(err)
	}
	info, _ = os.Lstat(a)
	if ct := ChangeTime(info); time.Since(ct) > time.Minute {
		t.Errorf("ChangeTime = %v after a change just now (mtime %v)", ct, info.ModTime())
	}
}

// A folder of one's own that others cannot write is private; the same
// folder open to others, a link to it, a file and a missing path are not.
func TestPrivateDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	own := filepath.Join(dir, "own")
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(own, 0o755); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o1777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{own: runtime.GOOS != "windows", open: false, link: false, file: false, filepath.Join(dir, "missing"): false}
	if os.Geteuid() == 0 {
		// Root can show a folder of another user's.
		theirs := filepath.Join(dir, "theirs")
		if err := os.Mkdir(theirs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		want[theirs] = false
	}
	for path, private := range want {
		if got := PrivateDir(path); got != private {
			t.Errorf("PrivateDir(%s) = %v, want %v", filepath.Base(path), got, private)
		}
	}
}
