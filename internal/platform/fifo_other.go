//go:build !unix

package platform

import (
	"errors"
	"io/fs"
)

// Mkfifo: this system has no named pipes in the file system; tests that
// plant one skip that case.
func Mkfifo(path string) error {
	return &fs.PathError{Op: "mkfifo", Path: path, Err: errors.ErrUnsupported}
}
