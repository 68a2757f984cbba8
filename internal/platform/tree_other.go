//go:build !unix

package platform

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Tree is a destination folder (see tree.go). Here it is only its path:
// every call resolves it again, and a folder on the way swapped for a
// link (a junction) between the caller's check and the call is followed,
// as docs/platforms.md says. A link at the final component is still
// refused by the opens (OpenFile).
type Tree struct{ path string }

// OpenTree takes the folder path as a Tree; a link or other reparse
// point at path is refused with an error wrapping ErrLink.
func OpenTree(path string) (*Tree, error) {
	d, err := OpenDir(path)
	if err != nil {
		return nil, err
	}
	d.Close()
	return &Tree{path: path}, nil
}

// MkdirTree is MkdirBelow, giving the folder it reached as a Tree.
func MkdirTree(root string, rel []string, perm uint32) (*Tree, error) {
	if err := MkdirBelow(root, rel, perm); err != nil {
		return nil, err
	}
	return &Tree{path: filepath.Join(append([]string{root}, rel...)...)}, nil
}

// Open opens the tree's folder itself, by its path (a link there
// refused).
func (t *Tree) Open() (*os.File, error) { return OpenFile(t.path, os.O_RDONLY, 0) }

// Close releases the tree.
func (t *Tree) Close() error { return nil }

// Pin does nothing here: every call resolves its path.
func (t *Tree) Pin(rel string) error { return local(t, rel) }

// Lstat describes rel below the tree, a link itself rather than what it
// points to.
func (t *Tree) Lstat(rel string) (fs.FileInfo, error) {
	p, err := t.at(rel)
	if err != nil {
		return nil, err
	}
	return os.Lstat(p)
}

func (t *Tree) at(rel string) (string, error) {
	if err := local(t, rel); err != nil {
		return "", err
	}
	return t.full(rel), nil
}

// OpenFile opens the file rel below the tree, never following a link at
// rel itself (ErrLink then).
func (t *Tree) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	p, err := t.at(rel)
	if err != nil {
		return nil, err
	}
	return OpenFile(p, flag, perm)
}

// Mkdir makes the folder rel below the tree.
func (t *Tree) Mkdir(rel string, perm fs.FileMode) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	return os.Mkdir(p, perm)
}

// Remove removes the file, link or empty folder rel below the tree.
func (t *Tree) Remove(rel string) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

// RemoveAll removes rel below the tree and everything in it.
func (t *Tree) RemoveAll(rel string) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	return os.RemoveAll(p)
}

// Rename renames from to to, both below the tree.
func (t *Tree) Rename(from, to string) error {
	return t.two(from, to, os.Rename)
}

// Link makes to a new name of the file from, both below the tree.
func (t *Tree) Link(from, to string) error {
	return t.two(from, to, os.Link)
}

// Symlink makes rel below the tree a symbolic link to target.
func (t *Tree) Symlink(target, rel string) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	return os.Symlink(target, p)
}

// Exchange swaps a and b, both below the tree, as the system can
// (Exchange).
func (t *Tree) Exchange(a, b string) error {
	return t.two(a, b, Exchange)
}

func (t *Tree) two(a, b string, op func(a, b string) error) error {
	pa, err := t.at(a)
	if err != nil {
		return err
	}
	pb, err := t.at(b)
	if err != nil {
		return err
	}
	return op(pa, pb)
}

// RenameNoReplace renames from to to, both below the tree, without
// replacing what is at to (RenameNoReplace).
func (t *Tree) RenameNoReplace(from, to string) error {
	return t.two(from, to, RenameNoReplace)
}

// SyncDir makes the renames in the folder rel below the tree ("." for
// the tree itself) durable, as SyncDir can here.
func (t *Tree) SyncDir(rel string) error { return SyncDir(t.full(rel)) }

// SyncFS makes what was written below the folder rel durable (SyncFS).
func (t *Tree) SyncFS(rel string) error { return SyncFS(t.full(rel)) }

// Chtimes sets the access and modification times of rel below the tree.
func (t *Tree) Chtimes(rel string, atime, mtime time.Time) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	return os.Chtimes(p, atime, mtime)
}
