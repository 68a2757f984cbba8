package repository

import "context"

// Archiver is a source that can retire skills reversibly in place.
type Archiver interface {
	// Archive retires the skills names in one transaction (one new
	// revision) and returns the revision.
	Archive(ctx context.Context, names []string, author string) (Revision, error)
	// RestoreArchived brings one archived skill back.
	RestoreArchived(ctx context.Context, name, author string) (Revision, error)
}

// ArchiveDir is the folder of a git source where retired skills are moved,
// each at .archive/<its folder>. Discovery never enters a folder whose
// name starts with ".", so an archived skill is no skill; moving it back
// (or reverting the commit) restores it.
const ArchiveDir = ".archive"
