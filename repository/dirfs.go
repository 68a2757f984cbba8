package repository

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutside is returned for a path whose symbolic links resolve outside
// the root of a DirFS.
var ErrOutside = errors.New("resolves outside the source directory")

// ErrNotRegular is returned when opening something that is neither a
// regular file nor a directory: a FIFO, a socket or a device.
var ErrNotRegular = errors.New("not a regular file")

// DirFS is an fs.FS over a directory that never leaves it. Symbolic links
// are followed only while their target stays inside the root, and only
// regular files and directories can be opened; a FIFO is refused without
// blocking.
type DirFS struct {
	root   string // absolute, symbolic links resolved: the confinement
	prefix string // slash-separated directory inside root the FS is at
}

// NewDirFS returns a DirFS rooted at dir, which must exist.
func NewDirFS(dir string) (*DirFS, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	return &DirFS{root: real}, nil
}

// Dir returns the directory the DirFS serves, with symbolic links of the
// root resolved.
func (d *DirFS) Dir() string { return filepath.Join(d.root, filepath.FromSlash(d.prefix)) }

// Sub returns a DirFS for the directory dir inside d. It stays confined to
// d's root, not to dir: a link from one skill to a shared file elsewhere in
// the same source is allowed.
func (d *DirFS) Sub(dir string) (fs.FS, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	return &DirFS{root: d.root, prefix: path.Join(d.prefix, dir)}, nil
}

// resolve returns the real path of name, checked to stay inside the root.
func (d *DirFS) resolve(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	real, err := filepath.EvalSymlinks(filepath.Join(d.root, filepath.FromSlash(d.prefix), filepath.FromSlash(name)))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	if real != d.root && !strings.HasPrefix(real, d.root+string(filepath.Separator)) {
		return "", &fs.PathError{Op: op, Path: name, Err: ErrOutside}
	}
	return real, nil
}

// Open opens name for reading.
func (d *DirFS) Open(name string) (fs.File, error) {
	real, err := d.resolve("open", name)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK keeps open(2) on a FIFO from waiting for a writer; the
	// fstat below then refuses it.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Unwrap(err)}
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if !info.Mode().IsRegular() && !info.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	return f, nil
}

// Stat returns the FileInfo of name, following symbolic links that stay
// inside the root.
func (d *DirFS) Stat(name string) (fs.FileInfo, error) {
	real, err := d.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: errors.Unwrap(err)}
	}
	return info, nil
}

// ReadDir lists the directory name in lexical order. Entries keep their own
// type: a symbolic link is reported as one, not as its target.
func (d *DirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	real, err := d.resolve("readdir", name)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return entries, &fs.PathError{Op: "readdir", Path: name, Err: errors.Unwrap(err)}
	}
	return entries, nil
}

// Lstat returns the FileInfo of name itself, without following a final
// symbolic link. Its parent directories must stay inside the root.
func (d *DirFS) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrInvalid}
	}
	dir, base := filepath.Split(filepath.FromSlash(name))
	parent := "."
	if dir != "" {
		parent = filepath.ToSlash(filepath.Clean(dir))
	}
	real, err := d.resolve("lstat", parent)
	if err != nil {
		return nil, err
	}
	info, err := os.Lstat(filepath.Join(real, base))
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: errors.Unwrap(err)}
	}
	return info, nil
}

var (
	_ fs.StatFS    = (*DirFS)(nil)
	_ fs.SubFS     = (*DirFS)(nil)
	_ fs.ReadDirFS = (*DirFS)(nil)
)
