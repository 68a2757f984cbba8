//go:build unix

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// noFollow is what every no-follow open carries: no final symbolic link
// followed, no wait on a FIFO planted in the file's place, no descriptor
// leaked into a child.
const noFollow = unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// OpenFile opens name with flag and perm as os.OpenFile does, except that
// a symbolic link at name is refused, never followed: the error then
// wraps ErrLink. A FIFO at name is opened without waiting for a writer;
// callers that want a regular file check the result's Stat.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|noFollow, perm)
	if err != nil {
		return nil, linkErr(name, err)
	}
	return f, nil
}

// Dir is a directory opened without following a link: files are opened
// beneath it by descriptor, so a link swapped in for the directory after
// it was opened changes nothing.
type Dir struct {
	fd   int
	path string
}

// OpenDir opens the directory path itself; a symbolic link at path is
// refused with an error wrapping ErrLink.
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, linkErr(path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	return &Dir{fd: fd, path: path}, nil
}

// OpenFile opens the entry name (one path component) of d with flag and
// perm, never following a link at name.
func (d *Dir) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	full := filepath.Join(d.path, name)
	fd, err := unix.Openat(d.fd, name, flag|noFollow, uint32(perm.Perm()))
	if err != nil {
		return nil, linkErr(full, &fs.PathError{Op: "open", Path: full, Err: err})
	}
	return os.NewFile(uintptr(fd), full), nil
}

// Close closes the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// linkErr adds ErrLink to the error of an open that met a link: ELOOP
// under O_NOFOLLOW (EMLINK on FreeBSD), or ENOTDIR under O_DIRECTORY when
// path is in fact a link.
func linkErr(path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) || errors.Is(err, unix.ENOTDIR) {
		if info, lerr := os.Lstat(path); lerr == nil && info.Mode()&fs.ModeSymlink != 0 {
			return &fs.PathError{Op: "open", Path: path, Err: ErrLink}
		}
	}
	return err
}
