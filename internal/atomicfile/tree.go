package atomicfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// The functions below do what their namesakes above do, for a file below
// a folder held open (platform.Tree): the file, its temporary and its
// folder are reached from the held folder, never through a symbolic link
// another process swaps in on the way after the caller's check, which a
// write by path would follow (the temporary file created, the rename made
// and the folder flushed wherever the link leads). rel is a path below
// the tree, as platform.Tree takes it; errors name the full path. On
// Windows a Tree resolves by path, and so do these (docs/platforms.md).

// ReadBoundedIn is ReadBounded of rel below t. It gives the file's stat
// too, from the file it read.
func ReadBoundedIn(t *platform.Tree, rel string, max int64) ([]byte, fs.FileInfo, error) {
	path := filepath.Join(t.Path(), rel)
	f, err := t.OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, refusal(path, err)
	}
	defer f.Close()
	return readOpened(f, path, max)
}

// WriteFileIn is WriteFile of rel below t: the temporary files a killed
// writer left beside rel are swept through t too.
func WriteFileIn(t *platform.Tree, rel string, data []byte, perm os.FileMode) error {
	if err := writeFileIn(t, rel, data, perm); err != nil {
		return err
	}
	sweepIn(t, filepath.Dir(rel), LeftoverAge, filepath.Base(rel))
	return nil
}

func writeFileIn(t *platform.Tree, rel string, data []byte, perm os.FileMode) (err error) {
	name := filepath.Join(t.Path(), rel)
	if f, err := t.OpenFile(rel, os.O_RDONLY, 0); err == nil {
		f.Close()
	} else if errors.Is(err, platform.ErrLink) {
		return fmt.Errorf("write %s: %w", name, ErrSymlink)
	}
	f, tmp, err := CreateTemp(t.OpenFile, rel)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			_ = t.Remove(tmp)
		}
	}()
	if err = Fill(f, name, data, perm); err != nil {
		return err
	}
	if err = t.Rename(tmp, rel); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return t.SyncDir(filepath.Dir(rel))
}

// sweepIn is Sweep of the folder dir below t ("." for t itself).
func sweepIn(t *platform.Tree, dir string, olderThan time.Duration, names ...string) {
	d, err := t.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return
	}
	now := time.Now()
	for _, e := range entries {
		if !e.Type().IsRegular() || !isTemp(e.Name(), names) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) >= olderThan {
			_ = t.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// WriteJSONIfChangedIn is WriteJSONIfChanged of rel below t.
func WriteJSONIfChangedIn(t *platform.Tree, rel string, v any, perm os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Join(t.Path(), rel), err)
	}
	data = append(data, '\n')
	if sameIn(t, rel, data) {
		return nil
	}
	return WriteFileIn(t, rel, data, perm)
}

// sameIn is same of rel below t.
func sameIn(t *platform.Tree, rel string, data []byte) bool {
	f, err := t.OpenFile(rel, os.O_RDONLY, 0)
	return err == nil && holds(f, data)
}
