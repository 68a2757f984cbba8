//go:build !unix

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// StatDir is a directory whose entries are looked at many times. Here,
// without a descriptor to start from, Lstat goes by path. (Windows's
// Dir holds its directory open without FILE_SHARE_DELETE, which would
// keep a sync from swapping the folder it looks at.)
type StatDir struct {
	path string
}

// OpenStatDir checks that path is a directory itself, not a link to one
// or anything else.
func OpenStatDir(path string) (*StatDir, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrLink}
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	return &StatDir{path: path}, nil
}

var errNotDir = errors.New("not a directory")

// Lstat describes the entry at the slash path rel beneath d, as os.Lstat
// does.
func (d *StatDir) Lstat(rel string) (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(d.path, filepath.FromSlash(rel)))
}

// Close does nothing: nothing is held open.
func (d *StatDir) Close() error { return nil }
