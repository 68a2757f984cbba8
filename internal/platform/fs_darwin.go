package platform

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SyncFS makes everything written so far durable: macOS has no
// syncfs(2), so sync(2) for every file system.
func SyncFS(string) error {
	unix.Sync()
	return nil
}

// ChangeTime is when info's inode last changed: its ctime, which a rename
// sets too.
func ChangeTime(info fs.FileInfo) time.Time {
	switch st := info.Sys().(type) {
	case *syscall.Stat_t:
		return time.Unix(st.Ctimespec.Unix())
	case *unix.Stat_t: // StatDir and Tree
		return time.Unix(st.Ctim.Unix())
	}
	return info.ModTime()
}

// FileKey returns the device and inode of info, which came from Stat or
// Lstat; ok is false where the system does not tell.
func FileKey(info fs.FileInfo) (dev, ino uint64, ok bool) {
	switch st := info.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(uint32(st.Dev)), st.Ino, true
	case *unix.Stat_t: // StatDir and Tree
		return uint64(uint32(st.Dev)), st.Ino, true
	}
	return 0, 0, false
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TIOCGETA)
	return err == nil
}
