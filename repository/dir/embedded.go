package dir

import (
	"context"
	"io/fs"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Embedded is a source over any fs.FS, typically an embed.FS compiled into
// the binary. Its revision is a hash of its content, which changes only
// with a new build.
type Embedded struct {
	source string
	fsys   fs.FS
	opts   repository.Options
}

// NewEmbedded returns an Embedded source named source over fsys.
func NewEmbedded(source string, fsys fs.FS, opts repository.Options) *Embedded {
	return &Embedded{source: source, fsys: fsys, opts: opts}
}

// Source returns the source's name.
func (e *Embedded) Source() string { return e.source }

// Sync returns the hash of the FS's content.
func (e *Embedded) Sync(ctx context.Context) (repository.Revision, error) {
	return repository.LayoutRevision(ctx, e.fsys, true)
}

// Skills discovers the skills in the FS.
func (e *Embedded) Skills(ctx context.Context) ([]skill.Skill, []skill.Problem, error) {
	return repository.Discover(ctx, e.fsys, e.source, e.source, e.opts)
}

// GuessModes is true: an embedded file system holds no permission bits.
func (e *Embedded) GuessModes() bool { return true }

var _ repository.ModeGuesser = (*Embedded)(nil)
