//go:build unix

package platform

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A pinned folder is the one its path named when pinned: once it is
// moved away and a link to a folder outside is planted at its path, what
// is written, renamed, looked at and touched in it through the tree
// lands in the folder pinned, nothing outside. A path deeper in it is
// resolved as before: the link is refused. A second Pin changes nothing.
func TestTreePinnedFolderIsTheOneNamedWhenPinned(t *testing.T) {
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		outside := t.TempDir()
		for _, d := range []string{"staging/deep", "other"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.Pin("staging"); err != nil {
			t.Fatal(err)
		}
		if err := tr.Pin("other"); err != nil {
			t.Fatalf("a second Pin: %v", err)
		}
		if err := os.Rename(filepath.Join(dir, "staging"), filepath.Join(dir, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, "staging")); err != nil {
			t.Fatal(err)
		}
		f, err := tr.OpenFile(filepath.Join("staging", "a"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatalf("create in the pinned folder: %v", err)
		}
		f.Close()
		if err := tr.Rename(filepath.Join("staging", "a"), filepath.Join("staging", "b")); err != nil {
			t.Fatalf("rename in the pinned folder: %v", err)
		}
		info, err := tr.Lstat(filepath.Join("staging", "b"))
		if err != nil || !info.Mode().IsRegular() {
			t.Fatalf("lstat in the pinned folder: %v %v", info, err)
		}
		when := time.Unix(1_700_000_000, 0)
		if err := tr.Chtimes(filepath.Join("staging", "b"), when, when); err != nil {
			t.Fatal(err)
		}
		got, err := os.Lstat(filepath.Join(dir, "moved", "b"))
		if err != nil || !got.ModTime().Equal(when) {
			t.Errorf("the pinned folder's file: %v %v, want it there with its new time", got, err)
		}
		if _, err := tr.OpenFile(filepath.Join("staging", "deep", "c"), os.O_WRONLY|os.O_CREATE, 0o644); !errors.Is(err, ErrLinkOnPath) && !errors.Is(err, ErrLink) {
			t.Errorf("a path below the pinned folder through the link: %v, want it refused", err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Errorf("%d entries landed outside the tree", len(entries))
		}
	})
}

// What a Tree's or a StatDir's Lstat gives is read by the helpers as
// what os.Lstat gives: the same file key, links, owner and change time.
// The helpers read only a *syscall.Stat_t before, and said "not told" or
// "mine" of these.
func TestHelpersReadTheStatOfATreeAndAStatDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(file, filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	want, err := os.Lstat(file)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := OpenTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sd, err := OpenStatDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	fromTree, err := tr.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := sd.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	wdev, wino, _ := FileKey(want)
	wn, _ := Links(want)
	for name, got := range map[string]os.FileInfo{"Tree": fromTree, "StatDir": fromDir} {
		dev, ino, ok := FileKey(got)
		n, nok := Links(got)
		if !ok || dev != wdev || ino != wino || !nok || n != wn || n != 2 {
			t.Errorf("%s: key %d %d %v, links %d %v; os.Lstat's key %d %d, links %d", name, dev, ino, ok, n, nok, wdev, wino, wn)
		}
		if !ChangeTime(got).Equal(ChangeTime(want)) || !OwnedByMe(got) {
			t.Errorf("%s: change time %v, want %v; owned by me %v", name, ChangeTime(got), ChangeTime(want), OwnedByMe(got))
		}
	}
}
