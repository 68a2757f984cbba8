package git

import (
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/skillsync/skillsync/repository"
)

// DirKey returns the key of a git tree entry that is a directory: the
// hash of its tree, which its parent's listing already holds. Asking the
// TreeFS instead resolves the path from the root and reads the tree.
func (e *treeEntry) DirKey() (string, bool) {
	if e.entry.Mode != filemode.Dir {
		return "", false
	}
	return repository.TreeKeyPrefix + e.entry.Hash.String(), true
}

var _ repository.KeyedEntry = (*treeEntry)(nil)
