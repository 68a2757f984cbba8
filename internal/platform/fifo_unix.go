//go:build unix

package platform

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// Mkfifo makes a named pipe at path, for tests that plant one where a
// regular file belongs.
func Mkfifo(path string) error {
	if err := unix.Mkfifo(path, 0o644); err != nil {
		return &fs.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	return nil
}
