package platform

import (
	"fmt"
	"path/filepath"
)

// A Tree is a destination folder held open, below which skillsync
// writes, renames and removes by relative path. On Unix every path is
// resolved from the held descriptor, one component after another, never
// following a symbolic link (Linux: one openat2 with RESOLVE_NO_SYMLINKS
// and RESOLVE_BENEATH where the kernel has it), and each change is made
// with the *at call on the folder so reached: a folder swapped for a
// link by another process after the caller's check, on the way to the
// tree or inside it, is refused or is not on the way at all, never
// written through. A link met inside the tree gives an error wrapping
// ErrLinkOnPath. Windows resolves by path, as before: a folder swapped in
// the moment between a check and a write is still followed there
// (docs/platforms.md).
//
// Paths given to a Tree's methods are relative (filepath.IsLocal) and
// OS-separated; errors name the full path below Path(). A Tree is safe
// for use by several goroutines at once.

// local checks that rel is a path below the tree. It must be clean
// too: "a/.." is local by its text, but its last component, resolved
// from a, names a's parent, outside the tree once another process has
// moved a there.
func local(t *Tree, rel string) error {
	if rel == "" || !filepath.IsLocal(rel) || filepath.Clean(rel) != rel {
		return fmt.Errorf("%s: %q is not a path below it", t.path, rel)
	}
	return nil
}

// Path is the tree's folder as it was opened, for messages.
func (t *Tree) Path() string { return t.path }

// full is rel below the tree, for messages.
func (t *Tree) full(rel string) string { return filepath.Join(t.path, rel) }
