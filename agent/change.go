package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// NewChange returns the change that replaces old, the content read from
// path (nil for no file), with data, keeping the file's mode perm. max
// bounds the read that checks the file is still old when it is written.
func NewChange(path string, old, data []byte, perm fs.FileMode, max int64) Change {
	return Change{Path: path, Outcome: Added, Data: data, old: old, perm: perm, max: max}
}

// Write writes the change: nothing unless its Outcome is Added. The
// directory is made when missing and must not be a link; the file must
// still hold what was read when the change was computed (an agent writes
// its settings too, and a change made meanwhile is not lost silently). It
// is replaced atomically.
func (c Change) Write() error {
	if c.Outcome != Added {
		return nil
	}
	// Made and checked again: a link planted since the change was
	// computed is refused, not written through.
	if err := atomicfile.MkdirNoFollow(filepath.Dir(c.Path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", c.Path, err)
	}
	if now, _, err := ReadSettings(c.Path, c.max); err != nil || !bytes.Equal(now, c.old) {
		return fmt.Errorf("%s changed while skillsync edited it; run the command again", c.Path)
	}
	return atomicfile.WriteFile(c.Path, c.Data, c.perm)
}

// ReadSettings reads an agent's settings file of at most max bytes
// without following a link. A missing file reads as nil with mode 0644.
func ReadSettings(path string, max int64) ([]byte, fs.FileMode, error) {
	data, err := atomicfile.ReadBounded(path, max)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0o644, nil
	case errors.Is(err, atomicfile.ErrSymlink):
		return nil, 0, fmt.Errorf("%s is a symbolic link; skillsync does not write through links, add the entry by hand", path)
	case errors.Is(err, atomicfile.ErrTooLarge):
		return nil, 0, fmt.Errorf("%s is larger than %d bytes; add the entry by hand", path, max)
	case err != nil:
		return nil, 0, err
	}
	// The mode the rewritten file keeps: the one just read, which is no
	// link (ReadBounded refused that).
	perm := fs.FileMode(0o644)
	if info, err := os.Lstat(path); err == nil {
		perm = info.Mode().Perm()
	}
	return data, perm, nil
}
