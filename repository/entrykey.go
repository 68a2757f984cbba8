package repository

import (
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// keyedEntry is a directory entry that names the identity of the
// directory it lists, as DirKeyFS.DirKey would, without a lookup.
type keyedEntry interface {
	dirKey() (string, bool)
}

// dirKey returns the key of a git tree entry that is a directory: the
// hash of its tree, which its parent's listing already holds. Asking the
// TreeFS instead resolves the path from the root and reads the tree.
func (e *treeEntry) dirKey() (string, bool) {
	if e.entry.Mode != filemode.Dir {
		return "", false
	}
	return treeKeyPrefix + e.entry.Hash.String(), true
}

// entryKey returns the key of the directory e names when its entry
// carries it, else "".
func entryKey(e fs.DirEntry) string {
	if k, ok := e.(keyedEntry); ok {
		if key, ok := k.dirKey(); ok {
			return key
		}
	}
	return ""
}

var _ keyedEntry = (*treeEntry)(nil)
