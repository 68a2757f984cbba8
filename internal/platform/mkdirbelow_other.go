//go:build !unix

package platform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirBelow makes dir, and each missing folder between root and it, one
// component at a time, refusing a link met on the way (ErrLinkOnPath):
// by path, with a look at each folder before the next is made in it.
func MkdirBelow(root string, rel []string, perm uint32) error {
	at := root
	for _, name := range rel {
		at = filepath.Join(at, name)
		if err := os.Mkdir(at, fs.FileMode(perm)); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", at, err)
		}
		info, err := os.Lstat(at)
		switch {
		case err != nil:
			return fmt.Errorf("create %s: %w", at, err)
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s %w", at, ErrLinkOnPath)
		case !info.IsDir():
			return fmt.Errorf("%s is not a directory", at)
		}
	}
	return nil
}
