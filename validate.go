package skillsync

import (
	"context"

	"github.com/skillsync/skillsync/repository"
)

// Checked is one skill directory Validate looked at.
type Checked = repository.Checked

// ErrNoSkill is returned by Validate for a directory that holds no
// SKILL.md at all.
var ErrNoSkill = repository.ErrNoSkill

// Validate checks every skill at or below path: a skill directory, a
// SKILL.md, or a directory of skills. A skill is valid when it has no
// error (with strict, no warning either). Each problem's File is a path
// on disk. See repository.Validate.
func Validate(ctx context.Context, path string, strict bool) ([]Checked, error) {
	return repository.Validate(ctx, path, strict)
}
