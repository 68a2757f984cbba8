package skillsync

import (
	"cmp"
	"context"

	"github.com/skillsync/skillsync/drafts"
)

// PublishResult is what Publish wrote.
type PublishResult = drafts.PublishResult

// InvalidSkillError is a skill Publish refused: it fails strict
// validation, every warning counting as an error.
type InvalidSkillError = drafts.InvalidSkillError

// Publish writes the skill in the directory dir into the postgres source
// named source, in one transaction, after strict validation
// (drafts.Publish); author is recorded with the change (the engine's
// actor when ""). A source that is not configured, or is not a postgres
// source, is a *UsageError; a skill that fails validation is an
// *InvalidSkillError. Every daemon listening on the source syncs it as
// the change commits.
func (e *Engine) Publish(ctx context.Context, dir, source, author string) (PublishResult, error) {
	s, ok := e.source(source)
	if !ok {
		return PublishResult{}, usageErrorf("no source named %q in the config %s", source, e.cfg.File)
	}
	repo, err := e.open(s, "")
	if err != nil {
		return PublishResult{}, err
	}
	defer closeRepository(repo)
	w, ok := repo.(drafts.SkillWriter)
	if !ok {
		return PublishResult{}, usageErrorf("source %s is a %s source: only postgres sources can be published to (promote a draft to a git source)", source, s.Kind)
	}
	return drafts.Publish(ctx, w, dir, source, cmp.Or(author, e.actor))
}
