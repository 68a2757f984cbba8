package skillsync

import (
	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
)

// Gate is the workspace's promotion gate (package drafts), wired to the
// engine's config, catalog, audit log and sources: propose, list, diff,
// promote, reject, rollout and publish are its methods. A request it
// cannot meet is a *UsageError, a name no catalog has an
// *UnknownSkillError.
func (e *Engine) Gate() *drafts.Gate {
	p := e.cfg.Promotion
	return &drafts.Gate{Folder: drafts.NewFolder(e.layout, e.cfg.Limits.MaxFileSize).WithEnv(e.env),
		Policy: drafts.Policy{Approvers: p.Approvers, Targets: p.Targets, Auto: p.Auto, Config: e.cfg.File}, Audit: e.Audit(),
		WorkspaceDir: e.layout.SkillsDir(), UserDir: e.layout.UserSkillsDir(), SourceDirs: append(e.cfg.LocalDirs(), e.cfg.Global), Catalog: e.Catalog, CopyName: e.copyName,
		OpenSource: e.promotionTarget, Actor: e.actor, Now: e.now, Warn: e.warn}
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
