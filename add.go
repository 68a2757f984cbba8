package skillsync

import (
	"context"
	"fmt"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Offer is what one source holds, read without changing the workspace.
type Offer struct {
	Source   string          `json:"source"`
	Revision string          `json:"revision"`
	Skills   []skill.Skill   `json:"-"`
	Problems []skill.Problem `json:"problems"`
}

// Preview reads the skills s offers, as skillsync add --list and
// skillsync ls-remote show them before a source is added: a git source is
// fetched into the machine's git store (shared by every workspace, so a
// later add fetches nothing again), then its skills are read at the
// fetched commit. Nothing in the workspace is written: not the config,
// the cache or the lock. s need not be in the engine's config; its name
// only labels problems. Its skills: and exclude: are not applied: the
// offer is everything the source holds, for the caller to choose from;
// its plugins: is, and a plugin it names that the source lacks is a
// plugin-unknown problem.
func (e *Engine) Preview(ctx context.Context, s config.Source) (*Offer, error) {
	s.Skills, s.Exclude = nil, nil
	r, err := e.open(s, "")
	if err != nil {
		return nil, err
	}
	defer closeRepository(r)
	rev, err := r.Sync(ctx)
	if err == nil {
		var skills []skill.Skill
		var problems []skill.Problem
		if skills, problems, err = r.Skills(ctx); err == nil {
			return &Offer{Source: s.Name, Revision: string(rev), Skills: skills, Problems: problems}, nil
		}
	}
	if _, remote := r.(repository.Fetcher); remote {
		// The local adapters name their source in their errors already.
		err = fmt.Errorf("source %s: %w", s.Name, err)
	}
	return nil, err
}
