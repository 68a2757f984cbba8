package drafts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// PromoteOptions say who approves a promotion and where the draft goes.
type PromoteOptions struct {
	// Approver is who lets the draft through; no approver, no promotion.
	Approver string
	// To is TargetWorkspace (the default), TargetUser, or the name of a
	// source.
	To string
	// Message is the commit message's first lines for a source, and the
	// audit's detail for a layer.
	Message string
	// Branch is the branch a promotion to a git source pushes to instead
	// of skillsync/<name> (or, with publish: direct, the tracked branch).
	Branch string
	// Rollout ("10%") and Environments, when set, are written into the
	// draft's metadata.rollout and metadata.environments before it is let
	// through: a canary.
	Rollout      string
	Environments []string
}

// Promotion is what Promote did.
type Promotion struct {
	Name     string `json:"name"`
	Approver string `json:"approver"`
	// Target is workspace, user or the source's name.
	Target string `json:"target"`
	// Hash is the promoted skill's hash.
	Hash string `json:"hash"`
	// Dir is where a local promotion put the skill.
	Dir string `json:"dir,omitempty"`
	// Archived is where the skill it replaced went (skillsync restore
	// brings it back once the new one is moved away).
	Archived string `json:"archived,omitempty"`
	// Branch, Commit and Direct say what a promotion to a source wrote;
	// Path is the skill's folder in the source.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	Direct bool   `json:"direct,omitempty"`
	Path   string `json:"path,omitempty"`
	// Published is where the draft went after a promotion to a source.
	Published string `json:"published,omitempty"`
	// Unchanged says the source held the draft exactly already (a
	// publication whose draft was not moved away after it): nothing was
	// published, Commit is the revision that holds it, and the draft
	// moved on as after a publication.
	Unchanged bool `json:"unchanged,omitempty"`
	// Ignored is what git ignores in the draft's folder: a promotion to
	// a source never sends it, and a sync of a local layer never takes
	// it, so it is not in Hash either.
	Ignored Ignored `json:"ignored,omitzero"`
}

// Promote lets the draft name through the gate. The policy comes first:
// an approver is needed, inside Policy.Approvers when that is set, and the
// target must be one the policy allows (the workspace and user layers when
// it names none); a refusal is a *GateError. Then the draft is validated
// strictly, under its lock, and refused with every problem named
// (*InvalidError). A draft that is refused or whose move or push fails
// stays in the drafts.
//
// To workspace or user, the draft moves into that layer in one rename; a
// skill of that name already in the layer is archived first (skillsync
// restore brings it back), never deleted. To a source, the source must be
// a repository.Publisher: a git source commits the skill under its path on
// top of the revision the workspace has, with the approver and message in
// the commit, and pushes it with the source's auth to skillsync/<name> (or
// Branch), or with publish: direct to the tracked branch as a fast-forward
// only; a database writes it in one transaction. The draft then moves to
// skills/_drafts/.published/. Every step is a line of the audit log with
// the approver, the skill hash and, for a source, the commit or revision.
//
// With Rollout set, the draft's SKILL.md takes the canary fields once
// the policy lets it through, under the draft's lock; a promotion that
// then fails puts the SKILL.md back as it was. A rollout asked for
// wrongly is a *RequestError.
func (g *Gate) Promote(ctx context.Context, name string, opts PromoteOptions) (*Promotion, error) {
	edit, err := canary(name, opts)
	if err != nil {
		return nil, err
	}
	return g.promote(ctx, name, opts, false, edit)
}

// promote lets the draft through, edit (when set) changing its SKILL.md
// first.
func (g *Gate) promote(ctx context.Context, name string, opts PromoteOptions, auto bool, edit func([]byte) ([]byte, error)) (*Promotion, error) {
	to := cmp.Or(opts.To, TargetWorkspace)
	if err := checkBranch(opts.Branch); err != nil {
		return nil, fmt.Errorf("promote %s: %w", name, err)
	}
	if err := g.Policy.Check(name, opts.Approver, to, auto); err != nil {
		return nil, err
	}
	switch to {
	case TargetWorkspace:
		return g.promoteLocal(ctx, name, to, layering.Workspace, g.WorkspaceDir, opts, edit)
	case TargetUser:
		if g.UserDir == "" {
			return nil, g.Policy.refuse(name, "the user layer is off: set user: in %s", g.Policy.config())
		}
		return g.promoteLocal(ctx, name, to, layering.User, g.UserDir, opts, edit)
	}
	t, err := g.OpenSource(to)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, g.Policy.refuse(name, "%s is neither workspace, user nor a source in %s", to, g.Policy.config())
	}
	defer repository.Close(t.Repository)
	return g.publish(ctx, name, t, opts, edit)
}

// checkBranch refuses a --branch that is not a plain branch name: a full
// ref such as refs/heads/main would become refs/heads/refs/heads/main on
// the remote, and a name git itself refuses would fail only at the push.
func checkBranch(b string) error {
	if b == "" {
		return nil
	}
	if strings.HasPrefix(b, "refs/") {
		return fmt.Errorf("--branch %q is a full ref name; give the branch name alone (%q)", b, strings.TrimPrefix(strings.TrimPrefix(b, "refs/"), "heads/"))
	}
	bad := b == "@" || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".") || strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") ||
		strings.Contains(b, "//") || strings.Contains(b, "@{") || strings.Contains(b, "/.") || strings.HasPrefix(b, ".")
	for _, r := range b {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("--branch %q is not a valid git branch name", b)
	}
	return nil
}

// promoteLocal moves the draft into a local layer.
func (g *Gate) promoteLocal(ctx context.Context, name, to string, layer layering.Layer, layerDir string, opts PromoteOptions, edit func([]byte) ([]byte, error)) (*Promotion, error) {
	var old *Existing
	existing := func() (*Existing, error) {
		cat, err := g.Catalog(ctx)
		if err != nil {
			return nil, err
		}
		w, ok := cat.Lookup(name)
		if !ok {
			return nil, nil
		}
		for _, en := range append([]layering.Entry{w.Entry}, w.Shadowed...) {
			if en.Layer == layer && en.Dir != "" {
				old = &Existing{Name: en.Skill.Name, Dir: en.Dir}
				return old, nil
			}
		}
		return nil, nil
	}
	now := g.Now()
	p, err := g.Folder.PromoteLocal(ctx, name, layerDir, existing, nil, edit, now)
	if err != nil {
		return nil, err
	}
	target := g.CopyName(&layering.Entry{Layer: layer, Skill: skill.Skill{Name: name}})
	var events []curator.Event
	if p.Archived != "" {
		events = append(events, curator.Event{TS: now, Actor: g.Actor, Op: curator.OpArchived, Target: target,
			From: string(curator.Active), To: string(curator.Archived), BeforeHash: p.ArchivedHash, Approver: opts.Approver,
			Detail: "replaced by the draft " + approvedBy(opts.Approver) + "; moved " + old.Dir + " to " + p.Archived})
	}
	detail := approvedBy(opts.Approver) + "; moved " + p.Draft.Dir + " to " + p.Dir
	if opts.Message != "" {
		detail += ": " + opts.Message
	}
	events = append(events, curator.Event{TS: now, Actor: g.Actor, Op: OpPromoted, Target: target, From: "drafts", To: to,
		BeforeHash: p.ArchivedHash, AfterHash: p.Draft.Hash, Approver: opts.Approver, Detail: detail})
	promo := &Promotion{Name: name, Approver: opts.Approver, Target: to, Hash: p.Draft.Hash, Dir: p.Dir, Archived: p.Archived, Ignored: p.Draft.Ignored}
	if err := g.Audit.Append(events...); err != nil {
		return promo, fmt.Errorf("promoted %s to %s, but the audit log was not written: %w", name, to, err)
	}
	return promo, nil
}

// publish hands the draft to the source t, through its
// repository.Publisher ability.
func (g *Gate) publish(ctx context.Context, name string, t *Target, opts PromoteOptions, edit func([]byte) ([]byte, error)) (*Promotion, error) {
	pub, ok := t.Repository.(repository.Publisher)
	if !ok {
		return nil, fmt.Errorf("promote %s to %s: not supported for this source kind (%s); promote to a git source, workspace or user", name, t.Name, t.Kind)
	}
	now := g.Now()
	promo := &Promotion{Name: name, Approver: opts.Approver, Target: t.Name}
	dr, moved, keepErr, err := g.Folder.PromoteElsewhere(ctx, name, edit, func(dr Draft) error {
		fsys, err := dr.FS()
		if err != nil {
			return err
		}
		res, err := pub.Publish(ctx, repository.PublishRequest{
			Name: dr.Name, Files: fsys, List: dr.Files, Base: t.Base, Branch: opts.Branch, Direct: t.Direct,
			Message: commitMessage(dr, opts.Message, opts.Approver), Author: opts.Approver, Email: emailOf(opts.Approver), When: now,
		})
		if errors.Is(err, repository.ErrNothingToPublish) {
			promo.Commit, promo.Path, promo.Unchanged = string(cmp.Or(res.Base, t.Base)), res.Path, true
			return nil
		}
		if err != nil {
			if errors.Is(err, repository.ErrNonFastForward) {
				return fmt.Errorf("promote %s to %s: %w; run skillsync sync, check the draft with skillsync drafts diff %s, and promote again; the draft stays in the drafts", name, t.Name, err, name)
			}
			return fmt.Errorf("promote %s to %s: %w; the draft stays in the drafts", name, t.Name, err)
		}
		promo.Branch, promo.Commit, promo.Direct, promo.Path = res.Branch, string(res.Commit), res.Direct, res.Path
		return nil
	}, now)
	if err != nil {
		return nil, err
	}
	promo.Hash, promo.Published, promo.Ignored = dr.Hash, moved, dr.Ignored
	if keepErr != nil {
		g.warnf("published %s, but the draft stays in the drafts: %v", name, keepErr)
	}
	ev := curator.Event{TS: now, Actor: g.Actor, Op: OpPublished, Target: "marketplace:" + t.Name + "/" + name,
		From: "drafts", To: promo.Branch, AfterHash: dr.Hash, Approver: opts.Approver, Commit: promo.Commit, Detail: publishedDetail(promo, t)}
	if err := g.Audit.Append(ev); err != nil {
		return promo, fmt.Errorf("published %s to %s, but the audit log was not written: %w", name, t.Name, err)
	}
	return promo, nil
}

// publishedDetail is the audit's words for a publication: the branch a
// commit went to, or, for a source without branches (a database), the
// revision it became.
func publishedDetail(p *Promotion, t *Target) string {
	if p.Branch == "" {
		return fmt.Sprintf("%s; written to the %s source %s as revision %s", approvedBy(p.Approver), t.Kind, t.Name, p.Commit)
	}
	if p.Unchanged {
		return fmt.Sprintf("%s; %s of %s held it as the draft has it already at %s", approvedBy(p.Approver), p.Path, t.Location, short(p.Commit))
	}
	how := "review branch"
	if p.Direct {
		how = "tracked branch"
	}
	return fmt.Sprintf("%s; pushed %s to the %s %s of %s at %s", approvedBy(p.Approver), short(p.Commit), how, p.Branch, t.Location, p.Path)
}
