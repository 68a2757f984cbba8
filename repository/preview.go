package repository

import (
	"context"
	"fmt"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

// Offer is what one source holds, read without changing a workspace.
type Offer struct {
	Source   string          `json:"source"`
	Revision string          `json:"revision"`
	Skills   []skill.Skill   `json:"-"`
	Problems []skill.Problem `json:"problems"`
}

// Preview brings r up to date (a git source is fetched into the
// machine's git store) and reads the skills it offers at that revision.
// source labels errors of a remote source; the local kinds name their
// source in their errors already.
func Preview(ctx context.Context, r Repository, source string) (*Offer, error) {
	rev, err := r.Sync(ctx)
	if err == nil {
		var skills []skill.Skill
		var problems []skill.Problem
		if skills, problems, err = r.Skills(ctx); err == nil {
			// As a sync takes them: the first of two with one name.
			skills, dups := layering.Dedupe(skills)
			problems = append(problems, layering.DuplicateProblems(source, dups)...)
			return &Offer{Source: source, Revision: string(rev), Skills: skills, Problems: problems}, nil
		}
	}
	if _, remote := r.(Fetcher); remote {
		err = fmt.Errorf("source %s: %w", source, err)
	}
	return nil, err
}
