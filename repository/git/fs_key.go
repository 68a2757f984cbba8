package git

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/skillsync/skillsync/repository"
)

// DirKey returns the git hash of the tree at name, following symbolic
// links: two directories with one key hold the same files, which lets
// discovery read a tree repeated at many paths once.
func (t *TreeFS) DirKey(name string) (string, error) {
	n, err := t.lookup("dirkey", name)
	if err != nil {
		return "", err
	}
	if n.tree == nil {
		return "", &fs.PathError{Op: "dirkey", Path: name, Err: errors.New("not a directory")}
	}
	return "tree:" + n.tree.Hash.String(), nil
}

var _ repository.DirKeyFS = (*TreeFS)(nil)

// SameContent reports whether the file at name holds what the file at
// name held in the tree key names (a ContentKey: "git-tree:<hash>"), by
// their blob hashes, links followed in both as Open follows them. It is
// false when it cannot tell: a key of no git tree, a tree the store no
// longer holds, a name that is not a file in both.
func (t *TreeFS) SameContent(key, name string) bool {
	hex, ok := strings.CutPrefix(key, "git-tree:")
	if !ok || !plumbing.IsHash(hex) {
		return false
	}
	root, err := t.trees.byHash(plumbing.NewHash(hex))
	if err != nil {
		return false
	}
	before := &TreeFS{root: root, mtime: t.mtime, blobs: t.blobs, maxFileSize: t.maxFileSize, trees: t.trees}
	was, err := before.lookup("samecontent", name)
	if err != nil || was.tree != nil || !was.entry.Mode.IsFile() {
		return false
	}
	now, err := t.lookup("samecontent", name)
	if err != nil || now.tree != nil || !now.entry.Mode.IsFile() {
		return false
	}
	return was.entry.Hash == now.entry.Hash
}

var _ repository.SameContentFS = (*TreeFS)(nil)
