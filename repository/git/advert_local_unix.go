//go:build unix

package git

import (
	"os"
	"syscall"
)

// ownedByMe reports whether dir belongs to the user running skillsync;
// for another's repository git's safe.directory rules decide, so git
// upload-pack is asked.
func ownedByMe(dir string) bool {
	info, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// openRegular opens name for reading only when it is a regular file: a
// FIFO put in its place is not waited on (O_NONBLOCK) and a device is
// refused; with follow false, a symlink is refused too.
func openRegular(name string, follow bool) (*os.File, error) {
	flag := os.O_RDONLY | syscall.O_NONBLOCK
	if !follow {
		flag |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		return nil, err
	}
	return keepRegular(f, name)
}
