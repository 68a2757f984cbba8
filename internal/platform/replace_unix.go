//go:build unix

package platform

import (
	"errors"
	"os"
	"syscall"
)

// ReplaceFile renames the file from to to, replacing a file at to. It is
// os.Rename without the lstat of to that os.Rename makes first on Unix to
// refuse a directory there: rename(2) refuses to put a file over a
// directory by itself (EISDIR), and a sync that patches hundreds of
// skills made that call once for each. Like os.Rename, it tries again
// when a signal interrupts the call (EINTR, which network file systems
// give).
func ReplaceFile(from, to string) error {
	for {
		err := syscall.Rename(from, to)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
		}
		return nil
	}
}
