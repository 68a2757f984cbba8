package platform

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Exchange swaps the directories (or files) a and b in one step with
// renamex_np(RENAME_SWAP): a reader opening either path sees one of the
// two, never neither. Both must exist. A file system without the flag
// (ENOTSUP) gives ErrNoExchange.
func Exchange(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: ErrNoExchange}
	}
	return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
}

// RenameNoReplace renames from to to, failing with an error that wraps
// fs.ErrExist when to exists, even as an empty directory:
// renamex_np(RENAME_EXCL), or RenameNoReplaceByLink on a file system
// without it.
func RenameNoReplace(from, to string) error {
	err := unix.RenamexNp(from, to, unix.RENAME_EXCL)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return RenameNoReplaceByLink(from, to)
	case errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY):
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
