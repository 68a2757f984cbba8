package syncrun

import (
	"slices"
	"strings"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/usageerr"
	"github.com/skillsync/skillsync/materialize"
)

// CheckPrune refuses, unless pruneAll, a sync that would take every
// source the cache holds out of it, the lock and the targets because the
// config no longer names them: a config with no sources, or no config
// file at all (the built-in default), which is what a deleted or stashed
// skillsync.yaml leaves. A config that names some of them prunes the rest
// as it always did.
func CheckPrune(cfg *config.Config, m *materialize.Manifest, pruneAll bool) error {
	if pruneAll || len(m.Sources) == 0 {
		return nil
	}
	if len(cfg.Sources) == 0 {
		return usageerr.Errorf("the config %s has no sources, and the cache still holds sources (%d): sync would remove them all; add sources, or run skillsync sync --prune-all to empty the cache",
			cfg.File, len(m.Sources))
	}
	if cfg.File != "" {
		return nil
	}
	var gone []string
	for name := range m.Sources {
		if !slices.ContainsFunc(cfg.Sources, func(s config.Source) bool { return s.Name == name }) {
			gone = append(gone, name)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	slices.Sort(gone)
	return usageerr.Errorf("no %s in %s, and the cache holds sources the built-in default does not name (%s): a sync would take them out of the cache, the lock and the targets; bring the config back (git checkout %s), pass --config, or run skillsync sync --prune-all to sync the default",
		config.FileName, cfg.Workspace, strings.Join(gone, ", "), config.FileName)
}
