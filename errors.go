package skillsync

import (
	"errors"

	"github.com/skillsync/skillsync/catalog"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/usageerr"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/syncrun"
)

// ErrPartial is returned by Sync, with its report, when some sources
// failed, or some skills could not be written, and kept their last good
// files while the rest was synced.
var ErrPartial = syncrun.ErrPartial

// ErrFailed is returned by Sync, with its report, when all sources failed.
var ErrFailed = syncrun.ErrFailed

// IsLocked reports whether err is another process holding the lock of
// the cache, the usage file or a git store past the wait.
func IsLocked(err error) bool { return errors.Is(err, flock.ErrLocked) }

// LockHolder returns the pid that holds the lock err is about, 0 when err
// is not a held lock or the holder is unknown.
func LockHolder(err error) int {
	var held *flock.HeldError
	if errors.As(err, &held) {
		return held.PID
	}
	return 0
}

// IsConfig reports whether err is a config that does not load or does
// not fit the request: a usage mistake, not a failure of the work.
func IsConfig(err error) bool {
	var ce *config.Error
	return errors.As(err, &ce)
}

// IsFrozen reports whether err is a sync --frozen that the lock file does
// not match.
func IsFrozen(err error) bool {
	var fe *FrozenError
	return errors.As(err, &fe)
}

// FrozenError is a sync --frozen whose config or content does not match
// the lock file. Diff has one line per difference.
type FrozenError = lock.FrozenError

// UnknownSkillError is a name the catalog does not have.
type UnknownSkillError = catalog.UnknownSkillError

// HiddenError is a skill the config hides: read and use refuse it as the
// catalog leaves it out.
type HiddenError = catalog.HiddenError

// UsageError is a request that cannot be met as asked: an unknown source
// name. It is the caller's to fix. (A promotion the gate's policy refuses
// is a *drafts.GateError, a failure, not a usage mistake.) drafts and
// fleet return the same type.
type UsageError = usageerr.UsageError

func usageErrorf(format string, args ...any) error { return usageerr.Errorf(format, args...) }
