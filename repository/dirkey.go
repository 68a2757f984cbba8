package repository

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/skillsync/skillsync/internal/platform"
)

// DirKeyFS is an fs.FS that names the identity of a directory: two names
// with one key are the same directory (a link and its target, two paths to
// one inode) or hold the same files (two git trees with one hash).
// Discovery reads each identity once, so a link back to a parent or a tree
// repeated at every level costs one visit, not one per path.
type DirKeyFS interface {
	fs.FS
	DirKey(name string) (string, error)
}

// DirKey returns the device and inode of the directory name, following
// symbolic links that stay inside the root.
func (d *DirFS) DirKey(name string) (string, error) {
	info, err := d.Stat(name)
	if err != nil {
		return "", err
	}
	dev, ino, ok := platform.FileKey(info)
	if !ok || !info.IsDir() {
		return "", &fs.PathError{Op: "dirkey", Path: name, Err: errors.New("not a directory with an inode")}
	}
	return fmt.Sprintf("inode:%d:%d", dev, ino), nil
}

var _ DirKeyFS = (*DirFS)(nil)

// KeyedEntry is a directory entry that names the identity of the
// directory it lists, as DirKeyFS.DirKey would, without a lookup (a git
// tree entry holds its tree's hash).
type KeyedEntry interface {
	DirKey() (string, bool)
}

// entryKey returns the key of the directory e names when its entry
// carries it, else "".
func entryKey(e fs.DirEntry) string {
	if k, ok := e.(KeyedEntry); ok {
		if key, ok := k.DirKey(); ok {
			return key
		}
	}
	return ""
}
