package syncrun

import (
	"slices"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/lock"
)

// CarryRenamed moves the cache's copy of each source the config renamed
// (lock.File.Renamed: the same type, URL and ref under a new name) to
// its new name before the sync reads it (materialize.Cache.RenameSource):
// the source goes on from its last good files, which a fetch that fails
// keeps. Only a rename the lock tells of one way: two old names for one
// new one are left as they are, and pruned.
func (r *Run) CarryRenamed(sources []config.Source, base string) {
	renames := r.Lock.Renamed(sources, base)
	for _, rn := range renames {
		if slices.ContainsFunc(renames, func(o lock.Rename) bool { return o.To == rn.To && o.From != rn.From }) {
			continue
		}
		if err := r.Cache.RenameSource(rn.From, rn.To); err != nil {
			r.Report.Warnings = append(r.Report.Warnings, err.Error()+"; the source is read anew under its new name")
		}
	}
}
