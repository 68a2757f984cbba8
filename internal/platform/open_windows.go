package platform

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// OpenFile opens name with flag and perm as os.OpenFile does, except that
// a symbolic link, junction or other reparse point at name is refused,
// never followed: the error then wraps ErrLink. Windows has no
// O_NOFOLLOW; FILE_FLAG_OPEN_REPARSE_POINT opens the link itself instead
// of its target, and the opened handle is then checked, so a link swapped
// in between a check and the open is refused too.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	trunc := flag&os.O_TRUNC != 0
	f, err := os.OpenFile(name, flag&^os.O_TRUNC|syscall.FILE_FLAG_OPEN_REPARSE_POINT, perm)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if info.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrLink}
	}
	if trunc && info.Mode().IsRegular() {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// Dir is a directory opened without following a link. Its handle is held
// open, without FILE_SHARE_DELETE, so the directory cannot be renamed or
// replaced by a link while files are opened beneath it.
type Dir struct {
	f    *os.File
	path string
}

// OpenDir opens the directory path itself; a reparse point at path is
// refused with an error wrapping ErrLink.
func OpenDir(path string) (*Dir, error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	return &Dir{f: f, path: path}, nil
}

// OpenFile opens the entry name (one path component) of d with flag and
// perm, never following a link at name.
func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return OpenFile(filepath.Join(d.path, name), flag, perm)
}

// Close closes the directory.
func (d *Dir) Close() error { return d.f.Close() }
