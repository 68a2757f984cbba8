package materialize

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/jsonfile"
)

// The record files other packages keep in the cache's own folder (a
// sync's SyncsName) go through the folder the cache holds open and
// locked, as the skills do: a .skills-cache swapped for a link after the
// cache was opened is not read or written through.

// ReadFile reads the file name, one path component, of the cache's own
// folder, as atomicfile.ReadBounded reads a file (no link followed, at
// most max bytes); a missing file wraps fs.ErrNotExist.
func (c *Cache) ReadFile(name string, max int64) ([]byte, error) {
	if err := ownName(name); err != nil {
		return nil, err
	}
	data, _, err := atomicfile.ReadBoundedIn(c.tree, name, max)
	return data, err
}

// WriteJSON writes v to the file name of the cache's own folder as
// jsonfile.Write does (atomically, unless it holds those bytes already).
func (c *Cache) WriteJSON(name string, v any, perm fs.FileMode) error {
	if err := ownName(name); err != nil {
		return err
	}
	return jsonfile.WriteIn(c.tree, name, v, perm)
}

// RemoveFile removes the file name of the cache's own folder, or a link
// in its place (never what it leads to); a missing one is no error.
func (c *Cache) RemoveFile(name string) error {
	if err := ownName(name); err != nil {
		return err
	}
	if err := c.tree.Remove(name); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// ownName refuses a name that is not one path component.
func ownName(name string) error {
	if name == "" || name == "." || filepath.Base(name) != name || !filepath.IsLocal(name) {
		return fmt.Errorf("%q is not a file of the cache's own folder", name)
	}
	return nil
}
