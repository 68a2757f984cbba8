//go:build unix

package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Tree is a destination folder held open by descriptor (see tree.go).
type Tree struct {
	fd   int
	path string
	// plain is set once openat2 is found missing (an old kernel, or a
	// sandbox that filters it): every later resolution walks.
	plain  atomic.Bool
	closed atomic.Bool
	// pinned is a folder below the tree held open too (Pin), nil until
	// then.
	pinned atomic.Pointer[pinnedDir]
}

// pinnedDir is a folder Pin holds open: its path below the tree, and
// its descriptor.
type pinnedDir struct {
	rel string
	fd  int
}

// Pin holds the folder rel below the tree open until the tree closes:
// a call on a path directly in it then starts from that descriptor
// instead of resolving rel again (an openat2 and a close each; a 1%
// sync's swaps made four of them per file in staging). It is the
// folder rel named when pinned, whatever is put at that path after, so
// the caller pins a folder that only it changes: a writer's staging. A
// tree pins one folder; a second Pin does nothing.
func (t *Tree) Pin(rel string) error {
	if err := local(t, rel); err != nil {
		return err
	}
	fd, err := t.resolve(rel)
	if err != nil {
		return err
	}
	if !t.pinned.CompareAndSwap(nil, &pinnedDir{rel: rel, fd: fd}) {
		unix.Close(fd)
	}
	return nil
}

// OpenTree opens the folder path as a Tree; a symbolic link at path
// is refused with an error wrapping ErrLink.
func OpenTree(path string) (*Tree, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, linkErr(path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	return &Tree{fd: fd, path: path}, nil
}

// MkdirTree is MkdirBelow that keeps the folder it reached open as a
// Tree: what is written there afterwards goes into that very folder,
// whatever becomes of the path from root to it.
func MkdirTree(root string, rel []string, perm uint32) (*Tree, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", root, err)
	}
	at := root
	for _, name := range rel {
		at = filepath.Join(at, name)
		if err := unix.Mkdirat(fd, name, perm); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(fd)
			return nil, fmt.Errorf("create %s: %w", at, err)
		}
		next, err := walkOne(fd, name, at)
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		fd = next
	}
	return &Tree{fd: fd, path: filepath.Join(append([]string{root}, rel...)...)}, nil
}

// walkOne opens the folder name below fd, never following a link: at is
// its full path, for the error, which wraps ErrLinkOnPath for a link.
func walkOne(fd int, name, at string) (int, error) {
	next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		return next, nil
	}
	var st unix.Stat_t
	switch {
	case (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK)) &&
		unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return -1, fmt.Errorf("%s %w", at, ErrLinkOnPath)
	case errors.Is(err, unix.ENOTDIR):
		return -1, fmt.Errorf("%s is not a directory", at)
	}
	return -1, &fs.PathError{Op: "open", Path: at, Err: err}
}

// walk opens the folder rel below the tree one component at a time,
// never following a link; the caller closes the result.
func (t *Tree) walk(rel string) (int, error) {
	fd, err := unix.Dup(t.fd)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: t.path, Err: err}
	}
	at := t.path
	for name := range strings.SplitSeq(rel, string(filepath.Separator)) {
		at = filepath.Join(at, name)
		next, err := walkOne(fd, name, at)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// parent opens the folder holding rel and returns it with rel's last
// component; the caller closes the descriptor, unless it is the tree's
// own (rel is one component), which close leaves open.
func (t *Tree) parent(rel string) (fd int, base string, err error) {
	if err := local(t, rel); err != nil {
		return -1, "", err
	}
	dir, base := filepath.Split(rel)
	if dir == "" {
		return t.fd, base, nil
	}
	dir = filepath.Clean(dir)
	if p := t.pinned.Load(); p != nil && p.rel == dir {
		return p.fd, base, nil
	}
	fd, err = t.resolve(dir)
	return fd, base, err
}

// inPinned reports whether rel is directly in the pinned folder.
func (t *Tree) inPinned(rel string) bool {
	p := t.pinned.Load()
	return p != nil && filepath.Dir(filepath.Clean(rel)) == p.rel
}

// done closes fd, a descriptor parent gave, unless it is the tree's own
// or the pinned folder's.
func (t *Tree) done(fd int) {
	if p := t.pinned.Load(); fd != t.fd && (p == nil || fd != p.fd) {
		unix.Close(fd)
	}
}

// Lstat describes rel below the tree, a link itself rather than what it
// points to. Its Sys is a *unix.Stat_t.
func (t *Tree) Lstat(rel string) (fs.FileInfo, error) {
	pfd, base, err := t.parent(rel)
	if err != nil {
		return nil, err
	}
	defer t.done(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: t.full(rel), Err: err}
	}
	return &statInfo{name: base, st: st}, nil
}

// Open opens the tree's folder itself again, from the descriptor held:
// a file of its own (a lock taken on it is not the tree's), on the very
// folder the tree holds, wherever its path leads now.
func (t *Tree) Open() (*os.File, error) {
	fd, err := unix.Openat(t.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: t.path, Err: err}
	}
	return os.NewFile(uintptr(fd), t.path), nil
}

// Close closes the tree's folder; a second Close does nothing (the
// descriptor's number may be another file's by then).
func (t *Tree) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	if p := t.pinned.Load(); p != nil {
		unix.Close(p.fd)
	}
	return unix.Close(t.fd)
}

// OpenFile opens the file rel below the tree with flag and perm, never
// following a link on the way or at rel itself (ErrLink then). A FIFO is
// opened without waiting for a writer.
func (t *Tree) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	// A path in the pinned folder starts from it (one openat), as every
	// other call's does: a whole-path openat2 would reach whatever folder
	// is at that path now.
	if !t.inPinned(rel) {
		if fd, ok := t.openFast(rel, flag|noFollow, uint32(perm.Perm())); ok {
			return os.NewFile(uintptr(fd), t.full(rel)), nil
		}
	}
	pfd, base, err := t.parent(rel)
	if err != nil {
		return nil, err
	}
	defer t.done(pfd)
	full := t.full(rel)
	fd, err := unix.Openat(pfd, base, flag|noFollow, uint32(perm.Perm()))
	if err != nil {
		return nil, t.linkAt(pfd, base, full, &fs.PathError{Op: "open", Path: full, Err: err})
	}
	return os.NewFile(uintptr(fd), full), nil
}

// linkAt gives err ErrLink when base in pfd is a link (what ELOOP and
// ENOTDIR mean under O_NOFOLLOW).
func (t *Tree) linkAt(pfd int, base, full string, err error) error {
	var st unix.Stat_t
	if (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) || errors.Is(err, unix.ENOTDIR)) &&
		unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &fs.PathError{Op: "open", Path: full, Err: ErrLink}
	}
	return err
}

// Mkdir makes the folder rel below the tree.
func (t *Tree) Mkdir(rel string, perm fs.FileMode) error {
	pfd, base, err := t.parent(rel)
	if err != nil {
		return err
	}
	defer t.done(pfd)
	if err := unix.Mkdirat(pfd, base, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkdir", Path: t.full(rel), Err: err}
	}
	return nil
}

// Remove removes the file, link or empty folder rel below the tree (the
// link itself, never what it points to).
func (t *Tree) Remove(rel string) error {
	pfd, base, err := t.parent(rel)
	if err != nil {
		return err
	}
	defer t.done(pfd)
	return removeAt(pfd, base, t.full(rel))
}

func removeAt(pfd int, base, full string) error {
	// As os.Remove: unlink, then rmdir; the error is rmdir's unless
	// base is no folder (ENOTDIR), when unlink's says why.
	uerr := unix.Unlinkat(pfd, base, 0)
	if uerr == nil {
		return nil
	}
	derr := unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR)
	if derr == nil {
		return nil
	}
	if errors.Is(derr, unix.ENOTDIR) {
		derr = uerr
	}
	return &fs.PathError{Op: "remove", Path: full, Err: derr}
}

// RemoveAll removes rel below the tree and everything in it, descending
// by descriptor and never following a link; a missing rel is no error.
func (t *Tree) RemoveAll(rel string) error {
	pfd, base, err := t.parent(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer t.done(pfd)
	return removeAllAt(pfd, base, t.full(rel))
}

// removeAllAt removes base, in the folder pfd, and everything in it.
// It lists a folder a batch of names at a time and opens it again for
// each batch, as os.RemoveAll does: some systems (macOS's) skip entries
// when a listing goes on while the names it gave are removed, and the
// folder would then not be empty at the end.
func removeAllAt(pfd int, base, full string) error {
	err := removeAt(pfd, base, full)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	const batch = 512
	for first := true; ; first = false {
		fd, oerr := unix.Openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case oerr == nil:
		case first:
			return err // not a folder: removeAt's error says why
		case errors.Is(oerr, unix.ENOENT):
			return nil
		default:
			return &fs.PathError{Op: "open", Path: full, Err: oerr}
		}
		dir := os.NewFile(uintptr(fd), full)
		names, rerr := dir.Readdirnames(batch)
		var errs []error
		for _, name := range names {
			if err := removeAllAt(fd, name, filepath.Join(full, name)); err != nil {
				errs = append(errs, err)
			}
		}
		dir.Close()
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if rerr != nil || len(names) < batch {
			break
		}
	}
	if err := unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: full, Err: err}
	}
	return nil
}

// Rename renames from to to, both below the tree, replacing what rename
// replaces.
func (t *Tree) Rename(from, to string) error {
	return t.twoAt("rename", from, to, func(ffd int, f string, tfd int, tb string) error {
		for {
			err := unix.Renameat(ffd, f, tfd, tb)
			if !errors.Is(err, unix.EINTR) {
				return err
			}
		}
	})
}

// Link makes to a new name of the file from, both below the tree;
// a link at from is linked itself, never followed.
func (t *Tree) Link(from, to string) error {
	return t.twoAt("link", from, to, func(ffd int, f string, tfd int, tb string) error {
		return unix.Linkat(ffd, f, tfd, tb, 0)
	})
}

// Symlink makes rel below the tree a symbolic link to target.
func (t *Tree) Symlink(target, rel string) error {
	pfd, base, err := t.parent(rel)
	if err != nil {
		return err
	}
	defer t.done(pfd)
	if err := unix.Symlinkat(target, pfd, base); err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: t.full(rel), Err: err}
	}
	return nil
}

// twoAt resolves the folders of from and to and calls op on them.
func (t *Tree) twoAt(name, from, to string, op func(ffd int, f string, tfd int, tb string) error) error {
	ffd, fb, err := t.parent(from)
	if err != nil {
		return err
	}
	defer t.done(ffd)
	tfd, tb, err := t.parent(to)
	if err != nil {
		return err
	}
	defer t.done(tfd)
	if err := op(ffd, fb, tfd, tb); err != nil {
		return &os.LinkError{Op: name, Old: t.full(from), New: t.full(to), Err: err}
	}
	return nil
}

// renameNoReplaceByLink is RenameNoReplaceByLink below the tree: to's
// name is claimed by a hard link of a file (or of a link, itself), or by
// an exclusive mkdir for a folder, which cannot be linked and which the
// rename then replaces.
func (t *Tree) renameNoReplaceByLink(from, to string) error {
	err := t.Link(from, to)
	switch {
	case err == nil:
		if err := t.Remove(from); err != nil {
			_ = t.Remove(to)
			return err
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		return &os.LinkError{Op: "rename", Old: t.full(from), New: t.full(to), Err: fs.ErrExist}
	}
	if err := t.Mkdir(to, 0o700); err != nil {
		return &os.LinkError{Op: "rename", Old: t.full(from), New: t.full(to), Err: existErr(unwrapPath(err))}
	}
	if err := t.Rename(from, to); err != nil {
		_ = t.Remove(to)
		return err
	}
	return nil
}

// dirFD opens the folder rel below the tree ("." is the tree itself)
// without following a link; done closes it.
func (t *Tree) dirFD(rel string) (fd int, done func(), err error) {
	if rel == "." {
		return t.fd, func() {}, nil
	}
	pfd, base, err := t.parent(rel)
	if err != nil {
		return -1, nil, err
	}
	defer t.done(pfd)
	fd, err = unix.Openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, t.linkAt(pfd, base, t.full(rel), &fs.PathError{Op: "open", Path: t.full(rel), Err: err})
	}
	return fd, func() { unix.Close(fd) }, nil
}

// SyncDir makes the renames in the folder rel below the tree ("." for
// the tree itself) durable: an fsync of it.
func (t *Tree) SyncDir(rel string) error {
	fd, done, err := t.dirFD(rel)
	if err != nil {
		return err
	}
	defer done()
	if err := unix.Fsync(fd); err != nil {
		return &fs.PathError{Op: "fsync", Path: t.full(rel), Err: err}
	}
	return nil
}

// Chtimes sets the access and modification times of rel below the tree,
// a link's own (never what it points to).
func (t *Tree) Chtimes(rel string, atime, mtime time.Time) error {
	pfd, base, err := t.parent(rel)
	if err != nil {
		return err
	}
	defer t.done(pfd)
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(pfd, base, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "chtimes", Path: t.full(rel), Err: err}
	}
	return nil
}
