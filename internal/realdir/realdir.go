// Package realdir makes and checks the folders skillsync keeps its own
// records in inside a workspace (.audit/, .archive/, _drafts/ and its
// .rejected/, .published/, .locks/): each must be a real directory, never
// a symbolic link, so that a link planted in a workspace cannot carry a
// write outside it.
package realdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSymlink is a symbolic link where skillsync reads or writes its own
// files: it refuses instead of following it.
var ErrSymlink = errors.New("is a symbolic link, which skillsync does not follow in the workspace; remove it")

// ErrNotDir is a path needed as a directory that is something else.
var ErrNotDir = errors.New("is not a directory; move it away")

// Ensure makes sure dir is a directory and not a symbolic link, creating
// it (and its parents) when missing; the folder that holds it (the layer
// folder, for .audit/, .archive/ and _drafts/) may not be a link either,
// or a planted skills -> elsewhere would carry every record out of the
// workspace. Errors name the path.
func Ensure(dir string) error {
	if err := checkParent(dir); err != nil {
		return err
	}
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		err = os.Mkdir(dir, 0o755)
	}
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return Check(dir)
}

// Check says whether an existing dir is a directory, not a link: nil, an
// error wrapping fs.ErrNotExist, ErrSymlink or ErrNotDir, or the error
// of lstat(2). It creates nothing.
func Check(dir string) error {
	info, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %w", dir, ErrSymlink)
	case !info.IsDir():
		return fmt.Errorf("%s %w", dir, ErrNotDir)
	}
	return nil
}

// checkParent refuses a dir whose parent exists and is a symbolic link.
func checkParent(dir string) error {
	parent := filepath.Dir(dir)
	if info, err := os.Lstat(parent); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", parent, ErrSymlink)
	}
	return nil
}
