// Package platform is the one place where skillsync's code differs by
// operating system. Everything else calls the small functions here and
// stays the same on Linux, macOS and Windows:
//
//   - Exchange: swap two directories in one step (Linux
//     renameat2(RENAME_EXCHANGE), macOS renamex_np(RENAME_SWAP)); where
//     the system has no such call it returns ErrNoExchange and the caller
//     falls back to two renames (materialize does, with a journal the next
//     sync recovers from).
//   - RenameNoReplace: rename that fails when the target exists, even as
//     an empty directory (Linux RENAME_NOREPLACE, macOS RENAME_EXCL,
//     Windows MoveFileEx without MOVEFILE_REPLACE_EXISTING), falling back
//     to RenameNoReplaceByLink.
//   - ReplaceFile: rename a file over another, without the lstat of the
//     target os.Rename adds on Unix.
//   - OpenFile, OpenDir and Dir.OpenFile: opens that never follow a
//     symbolic link at the final component (O_NOFOLLOW on Unix,
//     FILE_FLAG_OPEN_REPARSE_POINT and a check of the opened handle on
//     Windows).
//   - Tree: a destination folder held open, below which every write,
//     rename and removal resolves its path from the held descriptor
//     without following a link (openat2 RESOLVE_NO_SYMLINKS on Linux,
//     openat O_NOFOLLOW one component at a time elsewhere on Unix; by
//     path on Windows), so a folder swapped for a link after a check is
//     never written through (tree.go). Tree.Open opens the held folder
//     itself again, for a lock on the very folder written.
//   - TryLock and Unlock: the advisory file lock (flock on Unix,
//     LockFileEx on Windows).
//   - SyncDir: fsync a directory, so the renames in it are durable;
//     nothing on Windows, which cannot flush a directory.
//   - SyncFS, ChangeTime, FileKey, Links, OwnedByMe, IsTerminal: what the
//     file system and the terminal tell, as far as each system tells it.
//   - SetProcAttr: the process attributes the test helpers use (run as
//     another user, die with the parent).
//   - AdviseHugePages: transparent huge pages for a range of memory
//     (Linux madvise(MADV_HUGEPAGE)); elsewhere none. How large a range
//     the system has room for is startheap.Room's to say.
//
// Files are named for their system (_linux.go, _darwin.go, _unix.go,
// _windows.go, _other.go); the portable fallbacks are ordinary Go in this
// file, exported so that their tests run on Linux with the fallback
// forced. What only a real macOS or Windows machine can show is listed in
// docs/platforms.md.
package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrNoExchange is returned by Exchange where the system or the file
// system has no atomic exchange of two directories.
var ErrNoExchange = fmt.Errorf("no atomic directory exchange here: %w", errors.ErrUnsupported)

// ErrLink is wrapped by the errors of the no-follow opens when the final
// component is a symbolic link (or, on Windows, another reparse point).
var ErrLink = errors.New("is a symbolic link, not followed")

// ErrWouldBlock is returned by TryLock when another holder keeps the lock.
var ErrWouldBlock = errors.New("lock is held elsewhere")

// RenameNoReplaceByLink renames from to to without ever replacing what is
// at to, using only calls every system has: a file is hard-linked to its
// new name (link fails when the name exists) and its old name removed; a
// directory gets its new name claimed by an exclusive mkdir, which the
// rename then replaces (a rename may replace only an empty directory, and
// nobody else could have made this one). It is the fallback of
// RenameNoReplace where the system call is missing, and is called
// directly by tests.
func RenameNoReplaceByLink(from, to string) error {
	info, err := os.Lstat(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: unwrapPath(err)}
	}
	if !info.IsDir() {
		if err := os.Link(from, to); err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: existErr(unwrapLink(err))}
		}
		if err := os.Remove(from); err != nil {
			_ = os.Remove(to)
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: unwrapPath(err)}
		}
		return nil
	}
	if err := os.Mkdir(to, 0o700); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: existErr(unwrapPath(err))}
	}
	// syscall.Rename, not os.Rename: os refuses any directory as the
	// target, this empty one included.
	if err := syscall.Rename(from, to); err != nil {
		_ = os.Remove(to)
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: existErr(err)}
	}
	return nil
}

// existErr maps an error that says the target is there to fs.ErrExist.
func existErr(err error) error {
	if errors.Is(err, fs.ErrExist) {
		return fs.ErrExist
	}
	return err
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
