package repository

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// MaxLinkHops bounds symbolic link resolution, as the kernel's ELOOP
// does, in every file system a source is read through.
const MaxLinkHops = 40

// ErrOutside is returned for a path whose symbolic links resolve outside
// the root of a DirFS.
var ErrOutside = errors.New("resolves outside the source directory")

// ErrLinkLoop is returned for a path whose symbolic links lead through
// more than MaxLinkHops links: a loop, which the source's content makes.
var ErrLinkLoop = errors.New("too many levels of symbolic links")

// ErrNotRegular is returned when opening something that is neither a
// regular file nor a directory: a FIFO, a socket or a device.
var ErrNotRegular = errors.New("not a regular file")

// DirFS is an fs.FS over a directory that never leaves it. Symbolic links
// are followed only while their target stays inside the root, and only
// regular files and directories can be opened; a FIFO is refused without
// blocking.
//
// Every file is opened through an os.Root, which resolves names beneath
// the root in the kernel (openat2 with RESOLVE_BENEATH where Linux has it),
// so a file swapped for a link to the outside between a check and the open
// is refused, not followed.
type DirFS struct {
	root    string // absolute, symbolic links resolved: the confinement
	prefix  string // slash-separated directory inside root the FS is at
	beneath *os.Root
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
	beneath, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &DirFS{root: real, beneath: beneath}, nil
}

// inRoot is name as the os.Root sees it.
func (d *DirFS) inRoot(name string) string {
	if d.prefix == "" {
		return name
	}
	return path.Join(d.prefix, name)
}

// needsResolve reports whether an error of the os.Root needs resolve's
// judgement: anything but a plain "does not exist". The os.Root refuses
// absolute links even when they point back inside, and names a link out
// only as an escape; resolve tells the two apart.
func needsResolve(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrNotExist)
}

// ConcurrentReads marks a DirFS as safe to read from several goroutines
// at once: it holds nothing that changes, and the kernel serves the rest.
func (d *DirFS) ConcurrentReads() {}

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
	// A valid path is clean already, as path.Join would make it: joined
	// only below a prefix. A cache makes one Sub for each of thousands
	// of skills.
	prefix := dir
	if d.prefix != "" {
		prefix = path.Join(d.prefix, dir)
	}
	return &DirFS{root: d.root, prefix: prefix, beneath: d.beneath}, nil
}

// resolve returns name, relative to the os.Root, with every symbolic link
// in it replaced by its target, or ErrOutside when a link leads out of the
// root. It reads the tree only with Lstat and Readlink through the os.Root,
// so it touches nothing outside; the caller then opens the result through
// the os.Root as well, which refuses whatever changed in between.
func (d *DirFS) resolve(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	fail := func(err error) (string, error) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	pending := strings.Split(d.inRoot(name), "/")
	var done []string
	for hops := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return fail(ErrOutside)
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(append(done, c)...)
		info, err := d.beneath.Lstat(cur)
		if err != nil {
			return fail(err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if hops++; hops > MaxLinkHops {
			return fail(ErrLinkLoop)
		}
		target, err := d.beneath.Readlink(cur)
		if err != nil {
			return fail(err)
		}
		if filepath.IsAbs(target) {
			// An absolute link is inside only when it names the root's
			// own real path; one through another link to the root is
			// refused, which is stricter than the kernel would be.
			rel, err := filepath.Rel(d.root, filepath.Clean(target))
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fail(ErrOutside)
			}
			done = nil
			target = filepath.ToSlash(rel)
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return path.Join(done...), nil
}

// Open opens name for reading.
func (d *DirFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	// O_NONBLOCK keeps open(2) on a FIFO from waiting for a writer; the
	// fstat below then refuses it.
	const flags = os.O_RDONLY | syscall.O_NONBLOCK
	f, err := d.beneath.OpenFile(d.inRoot(name), flags, 0)
	if needsResolve(err) {
		rel, rerr := d.resolve("open", name)
		if rerr != nil {
			return nil, rerr
		}
		f, err = d.beneath.OpenFile(rel, flags, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: rootErr(err)}
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

// rootErr is the cause of an os.Root error, without the root's own path.
func rootErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Stat returns the FileInfo of name, following symbolic links that stay
// inside the root.
func (d *DirFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	info, err := d.beneath.Stat(d.inRoot(name))
	if needsResolve(err) {
		rel, rerr := d.resolve("stat", name)
		if rerr != nil {
			return nil, rerr
		}
		info, err = d.beneath.Stat(rel)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: rootErr(err)}
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
	info, err := d.beneath.Lstat(d.inRoot(name))
	if needsResolve(err) {
		parent, base := path.Split(name)
		rel, rerr := d.resolve("lstat", path.Clean(cmp.Or(parent, ".")))
		if rerr != nil {
			return nil, rerr
		}
		info, err = d.beneath.Lstat(path.Join(rel, base))
	}
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: rootErr(err)}
	}
	return info, nil
}

var (
	_ fs.StatFS    = (*DirFS)(nil)
	_ fs.SubFS     = (*DirFS)(nil)
	_ fs.ReadDirFS = (*DirFS)(nil)
)
