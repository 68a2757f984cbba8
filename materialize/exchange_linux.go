package materialize

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// exchange puts staged in place of live in one step: with live present the
// two are swapped by renameat2(RENAME_EXCHANGE), so a reader opening live
// sees the old directory or the new, never neither. It returns the path
// now holding the old version, or "" when live did not exist.
func exchange(staged, live string) (string, error) {
	err := unix.Renameat2(unix.AT_FDCWD, staged, unix.AT_FDCWD, live, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return staged, nil
	case errors.Is(err, unix.ENOENT):
		if _, lerr := os.Lstat(live); errors.Is(lerr, os.ErrNotExist) {
			return "", os.Rename(staged, live)
		}
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		// A file system without RENAME_EXCHANGE: fall back to two renames.
		return exchangeByRenames(staged, live)
	}
	return "", &os.LinkError{Op: "exchange", Old: staged, New: live, Err: err}
}

// syncFS flushes the file system holding dir: one syncfs(2) instead of an
// fsync per file written.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}

// changedAt is when info's inode last changed: its ctime, which a rename
// sets too.
func changedAt(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix())
	}
	return info.ModTime()
}
