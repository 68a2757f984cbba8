package materialize

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// RenameSource gives the cache's copy of source from to source to: the
// config renamed a source (the same type, URL and ref under a new name,
// as the lock tells). Its folder and record move, so the source starts
// under its new name from what it had, and keeps that, as a source that
// fails keeps its last good files, when it cannot be fetched. Before,
// the old name's copy was pruned and the new one had none: a rename
// while the remote was out of reach took every skill of the source out
// of the cache and the targets.
//
// Nothing is done when the cache holds no from, or holds to already. A
// sync killed between the move and its commit leaves the folder at to
// with the record still under from: the next one takes the record along
// to the folder, which the mark of the change has it check file by file.
func (c *Cache) RenameSource(from, to string) error {
	rec := c.manifest.Sources[from]
	if rec == nil || c.manifest.Sources[to] != nil || from == to {
		return nil
	}
	if err := errors.Join(checkName("source", from), checkName("source", to)); err != nil {
		return fmt.Errorf("carry source %s over to %s: %w", from, to, err)
	}
	if err := c.writer.markLive(); err != nil {
		return fmt.Errorf("carry source %s over to %s: %w", from, to, err)
	}
	err := c.tree.RenameNoReplace(from, to)
	switch {
	case errors.Is(err, fs.ErrNotExist) && isDir(filepath.Join(c.root, to)):
		// Moved by a sync that stopped before its commit.
	case err != nil:
		return fmt.Errorf("carry source %s over to %s: %w", from, to, err)
	}
	c.manifest.Sources[to] = rec
	delete(c.manifest.Sources, from)
	c.dirty = true
	return nil
}
