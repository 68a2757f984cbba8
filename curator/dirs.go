package curator

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/realdir"
)

// ErrSymlink is what the curator says of a symbolic link where it reads
// or writes its own files (.audit/, a day's audit file, .archive/, the
// usage file): a link planted in a workspace could send a write outside
// it, so the curator refuses instead of following it.
var ErrSymlink = realdir.ErrSymlink

// ErrNotDir is a path the curator needs as a directory that is something
// else.
var ErrNotDir = realdir.ErrNotDir

// LayerLinkError is a layer folder that is a symbolic link: see
// agent.LayerLinkError, whose journal the hooks keep there too.
type LayerLinkError = agent.LayerLinkError

// LayerLink says whether the layer folder dir is a symbolic link, and
// the fix (agent.LayerLink).
func LayerLink(dir string) error { return agent.LayerLink(dir) }

// realDir makes sure dir is a directory and not a symbolic link, creating
// it when missing, with a parent (the layer folder) that is no link
// either; see realdir.Ensure.
func realDir(dir string) error {
	if err := LayerLink(filepath.Dir(dir)); err != nil {
		return err
	}
	return realdir.Ensure(dir)
}

// checkRealDir says whether an existing dir is a directory, not a link.
func checkRealDir(dir string) error { return realdir.Check(dir) }

// ownDir makes sure dir (a layer folder) is a directory and not a link,
// creating it when missing. Its parents, the workspace's, are the user's
// to lay out and are not checked.
func ownDir(dir string) error {
	if err := LayerLink(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return checkRealDir(dir)
}
