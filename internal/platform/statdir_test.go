package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// StatDir's Lstat says of every kind of entry what os.Lstat says, and a
// link or a file cannot be opened as one.
func TestStatDirLstatsAsOsDoes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "a", "b", "f.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "top"), []byte("x"), 0o644))
	rels := []string{"top", "a", "a/b", "a/b/f.sh"}
	if runtime.GOOS != "windows" {
		must(os.Symlink("top", filepath.Join(dir, "link")))
		must(os.Chmod(filepath.Join(dir, "a"), 0o755|fs.ModeSticky))
		must(os.Chmod(filepath.Join(dir, "top"), 0o644|fs.ModeSetgid))
		rels = append(rels, "link")
	}
	d, err := OpenStatDir(dir)
	must(err)
	defer d.Close()
	for _, rel := range rels {
		got, err := d.Lstat(rel)
		must(err)
		want, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		must(err)
		if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("Lstat(%s) = %s %d %v %v, os.Lstat says %s %d %v %v", rel,
				got.Name(), got.Size(), got.Mode(), got.ModTime(), want.Name(), want.Size(), want.Mode(), want.ModTime())
		}
	}
	if _, err := d.Lstat("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat of a missing entry: %v", err)
	}
	if _, err := OpenStatDir(filepath.Join(dir, "top")); err == nil {
		t.Error("OpenStatDir opened a file")
	}
	if runtime.GOOS != "windows" {
		must(os.Symlink("a", filepath.Join(dir, "dirlink")))
		if _, err := OpenStatDir(filepath.Join(dir, "dirlink")); !errors.Is(err, ErrLink) {
			t.Errorf("OpenStatDir of a link to a folder: %v, want ErrLink", err)
		}
	}
}
