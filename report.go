package skillsync

import "github.com/skillsync/skillsync/syncrun"

// A sync's and a fetch's reports are syncrun's; these names keep the
// Engine's API as it was.
type (
	// SyncReport is what a sync did.
	SyncReport = syncrun.Report
	// SourceReport is one source in a sync report.
	SourceReport = syncrun.SourceReport
	// SkillChanges lists skills by what happened to them, as source/name.
	SkillChanges = syncrun.SkillChanges
	// ProblemReport is a problem as sync reports it.
	ProblemReport = syncrun.ProblemReport
	// FetchReport is what fetching one source did.
	FetchReport = syncrun.FetchReport
	// Status is how a source fared in a fetch or a sync.
	Status = syncrun.Status
)

// The statuses of a source.
const (
	StatusUpdated   = syncrun.StatusUpdated
	StatusUnchanged = syncrun.StatusUnchanged
	StatusFailed    = syncrun.StatusFailed
	// StatusPartial is a source synced but for some skills that could
	// not be written, which keep their last good files.
	StatusPartial = syncrun.StatusPartial
)

// DefaultJobs is how many sources are fetched at once.
const DefaultJobs = syncrun.DefaultJobs
