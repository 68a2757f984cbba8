package agent

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skillsync/skillsync/workspace"
)

// Workspace is the folder of a workspace as configured and, when a link
// leads there, as it resolves: an agent records the folder it ran in as
// the system gave it, which may be either.
type Workspace struct {
	paths []string
	// nested caches, per folder below the workspace, whether a cache
	// there makes it (and what is below it) another workspace.
	nested *nestedFolders
}

type nestedFolders struct {
	mu    sync.Mutex
	known map[string]bool
}

// NewWorkspace returns the workspace at root, an absolute path.
func NewWorkspace(root string) Workspace {
	root = filepath.Clean(root)
	w := Workspace{paths: []string{root}, nested: &nestedFolders{known: map[string]bool{}}}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		w.paths = append(w.paths, real)
	}
	return w
}

// Paths returns the workspace as configured, then as it resolves.
func (w Workspace) Paths() []string { return w.paths }

// Within reports whether the absolute path p is the workspace or inside
// it, and not inside a workspace nested in it (a folder below with a
// cache of its own, where a sync put it, or with its config and usage
// file while its cache is rebuilt): a session there uses that
// workspace's skills, and is counted there alone. A folder below with
// only a config is not one: a config may name its workspace elsewhere
// (workspace: .., for one kept in tools/). A relative path, as a record
// may hold, is in no workspace.
func (w Workspace) Within(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	p = filepath.Clean(p)
	for _, ws := range w.paths {
		if p == ws || strings.HasPrefix(p, ws+string(filepath.Separator)) {
			return !w.inNested(ws, p)
		}
	}
	return false
}

// inNested reports whether a folder from p up to, not including, the
// workspace root ws holds a workspace's cache.
func (w Workspace) inNested(ws, p string) bool {
	for d := p; d != ws && len(d) > len(ws); d = filepath.Dir(d) {
		if w.hasCache(d) {
			return true
		}
	}
	return false
}

// hasCache reports whether the folder dir holds a workspace's cache,
// asked of the system once per folder; or, its cache removed (it is
// disposable: the next sync builds it again), its config and its own
// usage file, which a folder with only a config (workspace: ..) has not.
// Without the cache, the sessions there are that workspace's still, and
// read here too they would count twice.
func (w Workspace) hasCache(dir string) bool {
	w.nested.mu.Lock()
	defer w.nested.mu.Unlock()
	has, ok := w.nested.known[dir]
	if !ok {
		has = isWorkspace(dir)
		w.nested.known[dir] = has
	}
	return has
}

// isWorkspace reports whether the folder dir is a workspace's (hasCache).
func isWorkspace(dir string) bool {
	if info, err := os.Lstat(filepath.Join(dir, workspace.CacheName)); err == nil && info.IsDir() {
		return true
	}
	l := workspace.New(dir, "")
	_, cerr := os.Lstat(l.ConfigFile())
	_, uerr := os.Lstat(l.UsageFile())
	return cerr == nil && uerr == nil
}

// enclosing returns the folder of the nearest workspace that the one at
// root is nested in, "" for none.
func enclosing(root string) string {
	for d := filepath.Dir(filepath.Clean(root)); ; d = filepath.Dir(d) {
		if isWorkspace(d) {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
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
