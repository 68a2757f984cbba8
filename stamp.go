package skillsync

import (
	"path/filepath"

	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/workspace"
)

// Stamp returns a value that changes whenever the catalog may have
// changed: a sync rewrote the cache's manifest, or a skill changed in a
// layer read in place, at any depth discovery looks (workspace.Stamp). A
// server re-reads the catalog when the stamp moves.
func (e *Engine) Stamp() (string, error) {
	manifest := filepath.Join(e.layout.CacheDir(), materialize.ManifestName)
	return workspace.Stamp([]string{manifest}, e.WatchDirs()[1:], repository.MaxDepth+2), nil
}

// WatchDirs returns the directories whose entries change when the
// catalog does: the cache, where a sync replaces the manifest, and each
// layer read in place, where promotion adds a skill and curation archives
// one. A server watches them to hear of a change when it happens.
func (e *Engine) WatchDirs() []string {
	dirs := []string{e.layout.CacheDir()}
	for _, l := range e.localLayers() {
		dirs = append(dirs, l.dir)
	}
	return dirs
}
