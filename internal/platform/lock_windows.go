package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffsetHigh places the locked byte the locked byte lies: far past any data, because a
// Windows lock is mandatory for the range it covers, and the lock file's
// record of its holder must stay readable by those who wait.
const lockOffsetHigh = 0x7fffffff

// TryLock takes a lock on the open file f without waiting, by
// LockFileEx(LOCKFILE_FAIL_IMMEDIATELY) on one byte far past the end:
// exclusive, or shared when exclusive is false. ErrWouldBlock means
// another holder keeps it. The lock goes when f is closed. As with flock,
// two handles in one process exclude each other.
func TryLock(f *os.File, exclusive bool) error {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrWouldBlock
	}
	return err
}

// Unlock releases the lock TryLock took on f, before f is closed (see the
// Unix Unlock: an inherited handle would otherwise keep it).
func Unlock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
