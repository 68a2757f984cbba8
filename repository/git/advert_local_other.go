//go:build !unix

package git

import (
	"fmt"
	"os"
)

// ownedByMe is false where ownership is not read here: git upload-pack
// answers for every local repository.
func ownedByMe(string) bool { return false }

// openRegular opens name for reading only when it is a regular file;
// with follow false, a symlink is refused too.
func openRegular(name string, follow bool) (*os.File, error) {
	if !follow {
		if info, err := os.Lstat(name); err != nil {
			return nil, err
		} else if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", name)
		}
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return keepRegular(f, name)
}
