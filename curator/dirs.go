package curator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSymlink is what the curator says of a symbolic link where it reads
// or writes its own files (.audit/, a day's audit file, .archive/, the
// usage file): a link planted in a workspace could send a write outside
// it, so the curator refuses instead of following it.
var ErrSymlink = errors.New("is a symbolic link, which skillsync does not follow in the workspace; remove it")

// ErrNotDir is a path the curator needs as a directory that is something
// else.
var ErrNotDir = errors.New("is not a directory; move it away")

// realDir makes sure dir is a directory and not a symbolic link, creating
// it (and its parents) when missing; the folder that holds it (the layer
// folder, for .audit/, .archive/ and _drafts/) may not be a link either,
// or a planted skills -> elsewhere would carry every record out of the
// workspace. Errors name the path.
func realDir(dir string) error {
	if err := realParent(dir); err != nil {
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
	return checkRealDir(dir)
}

// checkRealDir says whether an existing dir is a directory, not a link.
func checkRealDir(dir string) error {
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

// realParent refuses a dir whose parent exists and is a symbolic link.
func realParent(dir string) error {
	parent := filepath.Dir(dir)
	if info, err := os.Lstat(parent); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", parent, ErrSymlink)
	}
	return nil
}

// ownDir makes sure dir (a layer folder) is a directory and not a link,
// creating it when missing. Its parents, the workspace's, are the user's
// to lay out and are not checked.
func ownDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return checkRealDir(dir)
}
