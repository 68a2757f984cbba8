package repository

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
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
	// fast resolves names inside root in the kernel (openat2 with
	// RESOLVE_BENEATH where the kernel has it). What it refuses, such as
	// an absolute link that points back inside, is checked again by
	// resolve, component by component.
	fast *os.Root
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
	fast, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &DirFS{root: real, fast: fast}, nil
}

// inRoot is name as the os.Root sees it.
func (d *DirFS) inRoot(name string) string {
	if d.prefix == "" {
		return name
	}
	return path.Join(d.prefix, name)
}

// fastFailed reports whether an error of the fast path needs the slow
// one's judgement: anything but a plain "does not exist".
func fastFailed(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrNotExist)
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
	return &DirFS{root: d.root, prefix: path.Join(d.prefix, dir), fast: d.fast}, nil
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
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	// O_NONBLOCK keeps open(2) on a FIFO from waiting for a writer; the
	// fstat below then refuses it.
	f, err := d.fast.OpenFile(d.inRoot(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if fastFailed(err) {
		real, rerr := d.resolve("open", name)
		if rerr != nil {
			return nil, rerr
		}
		if f, err = os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Unwrap(err)}
		}
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
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	info, err := d.fast.Stat(d.inRoot(name))
	if !fastFailed(err) {
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
		}
		return info, nil
	}
	real, err := d.resolve("stat", name)
	if err != nil {
		return nil, err
	}
	info, err = os.Stat(real)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: errors.Unwrap(err)}
	}
	return info, nil
}

// ReadDir lists the directory name in lexical order. Entries keep their own
// type: a symbolic link is reported as one, not as its target.
func (d *DirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.Unwrap(err)}
	}
	defer f.Close()
	dir, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	entries, err := dir.ReadDir(-1)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if err != nil {
		return entries, &fs.PathError{Op: "readdir", Path: name, Err: err}
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
