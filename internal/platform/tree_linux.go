package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// resolve opens the folder rel below the tree with one openat2 that
// follows no link (RESOLVE_NO_SYMLINKS) and cannot leave the tree
// (RESOLVE_BENEATH); where the kernel has no openat2 (before 5.6, or a
// sandbox that filters it) it walks one component at a time. Any other
// failure walks too, for an error that names the component.
func (t *Tree) resolve(rel string) (int, error) {
	if !t.plain.Load() {
		fd, err := unix.Openat2(t.fd, rel, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == nil {
			return fd, nil
		}
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG) {
			t.plain.Store(true)
		}
	}
	return t.walk(rel)
}

// openFast opens rel below the tree with one openat2 that follows no
// link on the way or at rel: a file is created or opened with one call,
// as by path. false when that did not open it; the caller then walks,
// which tells why.
func (t *Tree) openFast(rel string, flag int, perm uint32) (int, bool) {
	if t.plain.Load() || !filepath.IsLocal(rel) {
		return -1, false
	}
	how := unix.OpenHow{Flags: uint64(flag) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if flag&unix.O_CREAT != 0 {
		how.Mode = uint64(perm)
	}
	fd, err := unix.Openat2(t.fd, rel, &how)
	return fd, err == nil
}

// Exchange swaps a and b, both below the tree, in one step
// (renameat2(RENAME_EXCHANGE)); a file system without it gives
// ErrNoExchange.
func (t *Tree) Exchange(a, b string) error {
	err := t.twoAt("exchange", a, b, func(afd int, ab string, bfd int, bb string) error {
		return unix.Renameat2(afd, ab, bfd, bb, unix.RENAME_EXCHANGE)
	})
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return &os.LinkError{Op: "exchange", Old: t.full(a), New: t.full(b), Err: ErrNoExchange}
	}
	return err
}

// RenameNoReplace renames from to to, both below the tree, failing with
// an error that wraps fs.ErrExist when to exists, even as an empty
// folder (renameat2(RENAME_NOREPLACE), or by a link or mkdir that claims
// the name first on a file system without the flag).
func (t *Tree) RenameNoReplace(from, to string) error {
	err := t.twoAt("rename", from, to, func(ffd int, f string, tfd int, tb string) error {
		return unix.Renameat2(ffd, f, tfd, tb, unix.RENAME_NOREPLACE)
	})
	switch {
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return t.renameNoReplaceByLink(from, to)
	case errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY):
		return &os.LinkError{Op: "rename", Old: t.full(from), New: t.full(to), Err: fs.ErrExist}
	}
	return err
}

// SyncFS flushes the file system holding the folder rel below the tree
// (syncfs).
func (t *Tree) SyncFS(rel string) error {
	fd, done, err := t.dirFD(rel)
	if err != nil {
		return err
	}
	defer done()
	if err := unix.Syncfs(fd); err != nil {
		return &os.PathError{Op: "syncfs", Path: t.full(rel), Err: err}
	}
	return nil
}
