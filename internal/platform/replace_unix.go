//go:build unix

package platform

import (
	"os"
	"syscall"
)

// ReplaceFile renames the file from to to, replacing a file at to. It is
// os.Rename without the lstat of to that os.Rename makes first on Unix to
// refuse a directory there: rename(2) refuses to put a file over a
// directory by itself (EISDIR), and a sync that patches hundreds of
// skills made that call once for each.
func ReplaceFile(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
