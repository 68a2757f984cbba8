package skillsync

import (
	"cmp"
	"context"
	"errors"
	"io"

	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
)

// gate wires the promotion gate (package drafts) to the engine's config,
// catalog, audit log and sources.
func (e *Engine) gate() *drafts.Gate {
	p := e.cfg.Promotion
	return &drafts.Gate{
		Folder:       drafts.NewFolder(e.layout, e.cfg.Limits.MaxFileSize),
		Policy:       drafts.Policy{Approvers: p.Approvers, Targets: p.Targets, Auto: p.Auto, Config: e.cfg.File},
		Audit:        e.Audit(),
		WorkspaceDir: e.layout.SkillsDir(),
		UserDir:      e.layout.UserSkillsDir(),
		Catalog:      e.Catalog,
		CopyName:     e.copyName,
		OpenSource:   e.promotionTarget,
		Actor:        e.actor,
		Now:          e.now,
		Warn:         e.warn,
	}
}

// promotionTarget opens the configured source name for a promotion, with
// the revision of it the workspace has; nil when there is none.
func (e *Engine) promotionTarget(name string) (*drafts.Target, error) {
	src, ok := e.source(name)
	if !ok {
		return nil, nil
	}
	r, err := e.open(src, "")
	if err != nil {
		return nil, err
	}
	where, _ := location(src, e.base())
	return &drafts.Target{Name: src.Name, Kind: string(src.Kind), Location: where, Repository: r, Direct: publishesDirect(src),
		Base: repository.Revision(e.cachedRevision(src.Name))}, nil
}

func (e *Engine) copyName(en *layering.Entry) string {
	if c, ok := e.copyOf(en); ok {
		return c.String()
	}
	return en.Layer.String() + "/" + en.Skill.Name
}

// Propose copies the skill directory dir into the drafts, skills/_drafts/,
// and records it in the audit log; with promotion.auto, a draft without
// problems is promoted at once. See drafts.Gate.Propose.
func (e *Engine) Propose(ctx context.Context, dir string, opts drafts.ProposeOptions) (*drafts.Proposal, error) {
	return e.gate().Propose(ctx, dir, opts)
}

// ProposeSkill writes files (slash-separated path to content) into the
// drafts as name, as Propose does with a directory. It is what the MCP
// server's propose_skill calls. See drafts.Gate.ProposeFiles.
func (e *Engine) ProposeSkill(ctx context.Context, name string, files map[string]string) (drafts.Draft, error) {
	return e.gate().ProposeFiles(ctx, name, files)
}

// Drafts lists the drafts by name, each validated strictly and, when the
// catalog has a skill of that name, with a diff summary against the copy
// that wins now. It writes nothing.
func (e *Engine) Drafts(ctx context.Context) ([]drafts.Draft, error) {
	return e.gate().List(ctx)
}

// DraftDiff writes the unified diff from the catalog's skill of the
// draft's name to the draft, in git's format; against names the copy
// compared with, "" for none.
func (e *Engine) DraftDiff(ctx context.Context, w io.Writer, name string) (against string, err error) {
	return e.gate().Diff(ctx, w, name)
}

// Promote lets the draft name through the gate, as promotion: in the
// config allows, into a local layer or a source. See drafts.Gate.Promote.
func (e *Engine) Promote(ctx context.Context, name string, opts drafts.PromoteOptions) (*drafts.Promotion, error) {
	p, err := e.gate().Promote(ctx, name, opts)
	return p, gateError(err)
}

// Reject moves the draft name to skills/_drafts/.rejected/ and records
// the reason in the audit log; it returns where the draft went.
func (e *Engine) Reject(ctx context.Context, name string, opts drafts.RejectOptions) (string, error) {
	return e.gate().Reject(ctx, name, opts)
}

// RolloutOptions say how a rollout change is published.
type RolloutOptions = drafts.RolloutOptions

// RolloutResult is what Rollout published.
type RolloutResult = drafts.RolloutResult

// Rollout sets the marketplace skill name's metadata.rollout to percent in
// its source, published the way a promotion is. See drafts.Gate.Rollout.
func (e *Engine) Rollout(ctx context.Context, name, percent string, opts RolloutOptions) (*RolloutResult, error) {
	res, err := e.gate().Rollout(ctx, name, percent, opts)
	return res, gateError(err)
}

// gateError gives the gate's errors the root's types: a request that
// cannot be met is a *UsageError, a name no catalog has an
// *UnknownSkillError.
func gateError(err error) error {
	var req *drafts.RequestError
	var unknown *drafts.UnknownSkillError
	switch {
	case errors.As(err, &req):
		return &UsageError{Err: err}
	case errors.As(err, &unknown):
		return &UnknownSkillError{Name: unknown.Name}
	}
	return err
}

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
