package postgres

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"
)

// errNotHeld is returned when opening a file whose content a limit kept
// out of the spool.
var errNotHeld = errors.New("content not read: the file is over a size limit")

// pgFS serves a snapshot of a Postgres source: its tree from the listing,
// its contents from the spool. Everything in it is a directory or a
// regular file; there are no symbolic links.
type pgFS struct {
	tree   *pgTree
	prefix string // "" or a slash-separated directory the FS is at
}

func (f *pgFS) lookup(op, name string) (*pgNode, string, error) {
	if !fs.ValidPath(name) {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	full := name
	if f.prefix != "" {
		full = path.Join(f.prefix, name)
	}
	n := f.tree.nodes[full]
	if n == nil {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, full, nil
}

// Open opens name for reading.
func (f *pgFS) Open(name string) (fs.File, error) {
	n, _, err := f.lookup("open", name)
	if err != nil {
		return nil, err
	}
	info := pgInfo{n: n, name: path.Base(name)}
	if n.dir {
		return &pgDir{info: info}, nil
	}
	if !n.held {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errNotHeld}
	}
	file, err := os.Open(filepath.Join(f.tree.spool, n.sum))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &pgFile{f: file, info: info}, nil
}

// Stat returns the FileInfo of name.
func (f *pgFS) Stat(name string) (fs.FileInfo, error) {
	n, _, err := f.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return pgInfo{n: n, name: path.Base(name)}, nil
}

// ReadDir lists the directory name in name order.
func (f *pgFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, _, err := f.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return entriesOf(n.children), nil
}

// Sub returns the FS of the directory dir.
func (f *pgFS) Sub(dir string) (fs.FS, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	if dir == "." {
		return f, nil
	}
	return &pgFS{tree: f.tree, prefix: path.Join(f.prefix, dir)}, nil
}

func entriesOf(nodes []*pgNode) []fs.DirEntry {
	out := make([]fs.DirEntry, len(nodes))
	for i, n := range nodes {
		out[i] = pgInfo{n: n, name: n.name}
	}
	return out
}

// pgInfo is a node's FileInfo and DirEntry.
type pgInfo struct {
	n    *pgNode
	name string
}

func (i pgInfo) Name() string { return i.name }

func (i pgInfo) Size() int64 {
	if i.n.dir {
		return 0
	}
	return i.n.size
}

func (i pgInfo) Mode() fs.FileMode          { return i.n.mode }
func (i pgInfo) ModTime() time.Time         { return i.n.modTime }
func (i pgInfo) IsDir() bool                { return i.n.dir }
func (i pgInfo) Sys() any                   { return nil }
func (i pgInfo) Type() fs.FileMode          { return i.n.mode.Type() }
func (i pgInfo) Info() (fs.FileInfo, error) { return i, nil }
func (i pgInfo) String() string             { return fs.FormatFileInfo(i) }

// pgFile is an open regular file: its content from the spool, its
// FileInfo from the snapshot.
type pgFile struct {
	f    *os.File
	info pgInfo
}

func (f *pgFile) Stat() (fs.FileInfo, error)              { return f.info, nil }
func (f *pgFile) Read(b []byte) (int, error)              { return f.f.Read(b) }
func (f *pgFile) ReadAt(b []byte, off int64) (int, error) { return f.f.ReadAt(b, off) }
func (f *pgFile) Seek(off int64, whence int) (int64, error) {
	return f.f.Seek(off, whence)
}
func (f *pgFile) Close() error { return f.f.Close() }

// pgDir is an open directory.
type pgDir struct {
	info   pgInfo
	offset int
}

func (d *pgDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *pgDir) Close() error               { return nil }

func (d *pgDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}

// ReadDir returns the next n entries, or all remaining ones when n <= 0,
// as fs.ReadDirFile says.
func (d *pgDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.info.n.children[d.offset:]
	if n <= 0 {
		d.offset += len(rest)
		return entriesOf(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.offset += n
	return entriesOf(rest[:n]), nil
}

var (
	_ fs.StatFS      = (*pgFS)(nil)
	_ fs.SubFS       = (*pgFS)(nil)
	_ fs.ReadDirFS   = (*pgFS)(nil)
	_ fs.ReadDirFile = (*pgDir)(nil)
)
