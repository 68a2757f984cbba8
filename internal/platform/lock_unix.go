//go:build unix

package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes an advisory lock on the open file f without waiting:
// exclusive, or shared when exclusive is false. ErrWouldBlock means
// another holder keeps it. The lock goes when f is closed. flock(2): the
// lock belongs to the open file, not the process, so two opens in one
// process exclude each other as two processes do.
func TryLock(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrWouldBlock
	}
	return err
}

// Unlock releases the lock on f before f is closed. Closing alone is not
// enough: a child forked at that moment (exec.Command in another
// goroutine) holds a copy of the descriptor until its exec, and with it
// the lock, so a process that locks again at once would find its own
// lock held. LOCK_UN releases it for every copy.
func Unlock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
