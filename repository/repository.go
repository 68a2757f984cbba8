// Package repository reads skills out of their sources: git remotes,
// file systems compiled into the binary, and local directories. Every
// adapter has the same shape, the Repository interface, and every adapter
// hands out skills whose files are an fs.FS.
package repository

import (
	"context"

	"github.com/skillsync/skillsync/skill"
)

// Revision identifies the state of a source: a commit hash for git, a
// content hash for the others.
type Revision string

// Repository is one source of skills.
type Repository interface {
	// Source is the source's name: one safe path component, unique in a
	// config.
	Source() string
	// Sync brings the local view of the source up to date and returns its
	// revision. It is cheap when nothing changed.
	Sync(ctx context.Context) (Revision, error)
	// Skills returns the valid skills at the synced revision and the
	// problems found on the way. An error means the source could not be
	// read at all.
	Skills(ctx context.Context) ([]skill.Skill, []skill.Problem, error)
}

// Options are the settings discovery shares across adapters.
type Options struct {
	// Strict turns every warning into an error, which skips the skill.
	Strict bool
	// MaxFileSize makes a skill with a larger file an error; 0 means no
	// limit.
	MaxFileSize int64
}
