package skillsync

import (
	"context"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/repository"
)

// Offer is what one source holds, read without changing the workspace.
type Offer = repository.Offer

// Preview reads the skills s offers, as skillsync add --list and
// skillsync ls-remote show them before a source is added
// (repository.Preview): a git source is fetched into the machine's git
// store (shared by every workspace, so a later add fetches nothing
// again). Nothing in the workspace is written. s need not be in the
// engine's config; its name only labels problems. Its skills: and
// exclude: are not applied: the offer is everything the source holds; its
// plugins: is, and a plugin it names that the source lacks is a
// plugin-unknown problem.
func (e *Engine) Preview(ctx context.Context, s config.Source) (*Offer, error) {
	s.Skills, s.Exclude = nil, nil
	r, err := e.open(s, "")
	if err != nil {
		return nil, err
	}
	defer repository.Close(r)
	return repository.Preview(ctx, r, s.Name)
}

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
