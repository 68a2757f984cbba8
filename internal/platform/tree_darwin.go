package platform

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Exchange swaps a and b, both below the tree, in one step
// (renameatx_np(RENAME_SWAP)); a file system without it gives
// ErrNoExchange.
func (t *Tree) Exchange(a, b string) error {
	err := t.twoAt("exchange", a, b, func(afd int, ab string, bfd int, bb string) error {
		return unix.RenameatxNp(afd, ab, bfd, bb, unix.RENAME_SWAP)
	})
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return &os.LinkError{Op: "exchange", Old: t.full(a), New: t.full(b), Err: ErrNoExchange}
	}
	return err
}

// RenameNoReplace renames from to to, both below the tree, failing with
// an error that wraps fs.ErrExist when to exists
// (renameatx_np(RENAME_EXCL), or by a link or mkdir that claims the name
// first on a file system without the flag).
func (t *Tree) RenameNoReplace(from, to string) error {
	err := t.twoAt("rename", from, to, func(ffd int, f string, tfd int, tb string) error {
		return unix.RenameatxNp(ffd, f, tfd, tb, unix.RENAME_EXCL)
	})
	switch {
	case errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return t.renameNoReplaceByLink(from, to)
	case errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY):
		return &os.LinkError{Op: "rename", Old: t.full(from), New: t.full(to), Err: fs.ErrExist}
	}
	return err
}

// SyncFS flushes what was written (sync: macOS has no syncfs).
func (t *Tree) SyncFS(string) error { return SyncFS(t.path) }
