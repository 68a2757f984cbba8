package jsonfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/platform"
)

// ReadIn is Read of rel below the folder t holds open: what is read is
// that folder's file, not one a link swapped in on the way leads to.
func ReadIn(t *platform.Tree, rel string, v Record) error {
	data, _, err := atomicfile.ReadBoundedIn(t, rel, MaxSize)
	return decode(filepath.Join(t.Path(), rel), data, err, v)
}

// WriteIn is Write of rel below the folder t holds open: the file is
// written into that folder, never through a symbolic link swapped in on
// the way to it after it was opened (atomicfile.WriteFileIn).
func WriteIn(t *platform.Tree, rel string, v any, perm fs.FileMode) error {
	return atomicfile.WriteJSONIfChangedIn(t, rel, v, perm)
}

// SetAsideIn is SetAside of rel below the folder t holds open. It returns
// the new name's full path.
func SetAsideIn(t *platform.Tree, rel string, now time.Time) (string, error) {
	base := rel + ".corrupt-" + now.UTC().Format(setAsideStamp)
	aside := base
	for i := 2; ; i++ {
		f, err := t.OpenFile(aside, os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err == nil {
			f.Close()
		}
		aside = fmt.Sprintf("%s-%d", base, i)
	}
	if err := t.Rename(rel, aside); err != nil {
		return "", fmt.Errorf("set aside %s: %w", filepath.Join(t.Path(), rel), err)
	}
	return filepath.Join(t.Path(), aside), nil
}
