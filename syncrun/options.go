package syncrun

import (
	"time"

	"github.com/skillsync/skillsync/materialize"
)

// DefaultWait is how long a sync waits for another one to release the
// cache.
const DefaultWait = 30 * time.Second

// Options change what a sync does. The zero value is skillsync sync:
// every source moves to its newest revision.
type Options struct {
	// Frozen syncs exactly the revisions in skillsync.lock and fails when
	// the config or a skill's content disagrees with it.
	Frozen bool
	// Locked keeps every source at its revision in skillsync.lock, except
	// the sources named in Move, which go to their newest revision.
	Locked bool
	Move   []string
	// Wait is how long to wait for another sync; 0 means DefaultWait.
	Wait time.Duration
	// Jobs is how many sources are fetched at once; 0 means DefaultJobs.
	Jobs int
	// Verify hashes every cached file instead of trusting stat data, and
	// rewrites whatever differs.
	Verify bool
	// StatCheck compares every cached and target file's size, mtime and
	// mode with its record (lstat) before trusting it, as every sync did
	// before records were trusted; a daemon runs one every so many syncs.
	// Without it (and without Verify) a source at its recorded revision
	// and config is current without a look at its files.
	StatCheck bool
	// Offline fetches nothing: sources with a local copy are materialized
	// at the revision the copy holds. Curation and restore use it.
	Offline bool
	// PruneAll lets a config without sources empty a cache that holds
	// some; without it such a sync refuses, since an emptied config is
	// more often a mistake than a wish.
	PruneAll bool
}

// WaitTime is how long to wait for another sync: Wait, or DefaultWait.
func (o Options) WaitTime() time.Duration {
	if o.Wait <= 0 {
		return DefaultWait
	}
	return o.Wait
}

// Check is how far the sync trusts recorded state.
func (o Options) Check() materialize.Check {
	switch {
	case o.Verify:
		return materialize.CheckHash
	case o.StatCheck:
		return materialize.CheckStat
	}
	return materialize.CheckRecord
}
