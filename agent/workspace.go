package agent

import (
	"path/filepath"
	"strings"
)

// Workspace is the folder of a workspace as configured and, when a link
// leads there, as it resolves: an agent records the folder it ran in as
// the system gave it, which may be either.
type Workspace struct {
	paths []string
}

// NewWorkspace returns the workspace at root, an absolute path.
func NewWorkspace(root string) Workspace {
	root = filepath.Clean(root)
	w := Workspace{paths: []string{root}}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		w.paths = append(w.paths, real)
	}
	return w
}

// Paths returns the workspace as configured, then as it resolves.
func (w Workspace) Paths() []string { return w.paths }

// Within reports whether the absolute path p is the workspace or inside
// it. A relative path, as a record may hold, is in no workspace.
func (w Workspace) Within(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	p = filepath.Clean(p)
	for _, ws := range w.paths {
		if p == ws || strings.HasPrefix(p, ws+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Configured writes a path under the workspace's resolved form under the
// workspace as configured, so it compares with the catalog's paths;
// other paths are returned as they are.
func (w Workspace) Configured(p string) string {
	if p == "" || len(w.paths) < 2 {
		return p
	}
	if rest, ok := strings.CutPrefix(p, w.paths[1]+string(filepath.Separator)); ok {
		return filepath.Join(w.paths[0], rest)
	}
	return p
}
