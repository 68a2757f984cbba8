package git

import (
	"errors"
	"io/fs"

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
