package materialize

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skillsync/skillsync/internal/jsonfile"
)

// TargetList is the cache's TargetsName: per config file, the target
// folders a sync on it keeps, so that the next one on that config gives up
// those it no longer names (package targets), and so that another
// workspace can tell whether this one still keeps a folder whose record
// names it (claimTarget). Per config file, so that a second config of the
// workspace (--config ci.yaml) gives up nothing the first keeps.
//
// A config file is named by its path from the workspace, or as a folder
// is; a folder is absolute, or "~/..." below the home directory: a sync
// run with another HOME (sudo, a service, a CI job) then reads the entry
// as that folder of its own home, which the config names there too,
// rather than give up the user's.
type TargetList struct {
	Version int                 `json:"version"`
	Configs map[string][]string `json:"configs"`
}

func (l *TargetList) Validate() error {
	if err := jsonfile.CheckVersion(l.Version, 1); err != nil {
		return err
	}
	for _, entries := range l.Configs {
		for _, entry := range entries {
			if rest, ok := strings.CutPrefix(entry, "~/"); ok && filepath.IsLocal(filepath.FromSlash(rest)) || filepath.IsAbs(entry) {
				continue
			}
			return fmt.Errorf("target %q is neither an absolute path nor one below ~/", entry)
		}
	}
	return nil
}

// ReadTargetList reads the list at file, checked as any record is. A
// missing one is an error (fs.ErrNotExist) with an empty list: a
// workspace without a list says nothing of the folders it keeps.
func ReadTargetList(file string) (*TargetList, error) {
	l := &TargetList{}
	err := jsonfile.Read(file, l)
	if l.Configs == nil || err != nil {
		l.Configs = map[string][]string{}
	}
	return l, err
}
