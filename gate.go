package skillsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Draft is a proposed skill in skills/_drafts/<name>/, waiting for the
// promotion gate. Drafts are never in the catalog, the prompt, the
// targets, the MCP server's list or the cache.
type Draft = curator.Draft

// GateError is a promotion the gate's policy (promotion: in the config)
// refuses: no approver, an approver or a target outside the policy. It is
// a failure of the request, exit status 1, not a usage mistake.
type GateError struct {
	Name   string
	Reason string
}

func (e *GateError) Error() string { return "promote " + e.Name + ": " + e.Reason }

// IsRefused reports whether err is the gate refusing a promotion, by its
// policy (*GateError) or because the draft has problems.
func IsRefused(err error) bool {
	var ge *GateError
	var ie *curator.InvalidDraftError
	return errors.As(err, &ge) || errors.As(err, &ie)
}

// AutoApprover is the approver the audit log names for a promotion that
// promotion.auto made.
const AutoApprover = "auto (promotion.auto)"

func (e *Engine) drafts() *curator.Drafts {
	return curator.NewDrafts(e.layout, e.cfg.Limits.MaxFileSize)
}

// ProposeOptions change a proposal.
type ProposeOptions struct {
	// Name is the draft's name; "" takes the name in the skill's SKILL.md,
	// else the directory's.
	Name string
}

// Proposal is what Propose did.
type Proposal struct {
	Draft Draft `json:"draft"`
	// Promotion is set when promotion.auto promoted the draft at once.
	Promotion *Promotion `json:"promotion,omitempty"`
	// AutoError says why promotion.auto did not promote a draft without
	// problems; the draft waits.
	AutoError string `json:"auto_error,omitempty"`
}

// Propose copies the skill directory dir into the drafts, inspects it
// strictly and records it in the audit log (op proposed, with the skill
// hash). A draft with problems is kept and listed with them. It refuses a
// link out of the skill, a FIFO, a file over max_file_size and a name a
// draft already has; see curator.Drafts.ProposeDir.
//
// With promotion.auto, a draft without problems is promoted at once to
// the first target of promotion.targets (the workspace by default), with
// AutoApprover as its approver: the config's author approved it in
// advance. Propose is where that happens, for the CLI, the Go API and
// MCP proposals alike.
func (e *Engine) Propose(ctx context.Context, dir string, opts ProposeOptions) (*Proposal, error) {
	name := opts.Name
	if name == "" {
		name = nameIn(dir)
	}
	dr, err := e.drafts().ProposeDir(ctx, dir, name, e.now())
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	return e.proposed(ctx, dr, "from "+abs)
}

// nameIn is the name a skill directory's SKILL.md gives, else the
// directory's own name.
func nameIn(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if fsys, err := repository.NewDirFS(abs); err == nil {
		if s, _ := skill.Load(fsys, ".", filepath.Base(abs)); skill.ValidName(s.Name) {
			return s.Name
		}
	}
	return filepath.Base(abs)
}

// ProposeSkill writes files (slash-separated path to content) into the
// drafts as name, as Propose does with a directory. It is what the MCP
// server's propose_skill calls: an agent proposes, a person promotes
// (unless promotion.auto is set). Promoted in the draft says where an
// automatic promotion took it.
func (e *Engine) ProposeSkill(ctx context.Context, name string, files map[string]string) (Draft, error) {
	data := make(map[string][]byte, len(files))
	for p, s := range files {
		data[p] = []byte(s)
	}
	dr, err := e.drafts().ProposeFiles(ctx, name, data, e.now())
	if err != nil {
		return dr, err
	}
	p, err := e.proposed(ctx, dr, "from an MCP client")
	if err != nil {
		return dr, err
	}
	if p.Promotion != nil {
		p.Draft.Promoted = p.Promotion.Target
	}
	return p.Draft, nil
}

// proposed records a new draft and runs promotion.auto on it.
func (e *Engine) proposed(ctx context.Context, dr Draft, from string) (*Proposal, error) {
	detail := from + "; " + problemCount(dr)
	if err := e.Audit().Append(curator.Event{TS: e.now(), Actor: e.actor, Op: curator.OpProposed,
		Target: draftTarget(dr.Name), To: "drafts", AfterHash: dr.Hash, Detail: detail}); err != nil {
		return &Proposal{Draft: dr}, err
	}
	p := &Proposal{Draft: dr}
	if !e.cfg.Promotion.Auto || !dr.Valid {
		return p, nil
	}
	to := e.cfg.Promotion.AllowedTargets()[0]
	promo, err := e.promote(ctx, dr.Name, PromoteOptions{Approver: AutoApprover, To: to}, true)
	if err != nil {
		p.AutoError = err.Error()
		e.warnf("promotion.auto did not promote %s to %s: %v; the draft waits", dr.Name, to, err)
		return p, nil
	}
	p.Promotion = promo
	return p, nil
}

func problemCount(dr Draft) string {
	switch n := len(dr.Problems); n {
	case 0:
		return "no problem"
	case 1:
		return "1 problem"
	default:
		return fmt.Sprintf("%d problems", n)
	}
}

func draftTarget(name string) string { return "drafts/" + name }

// Drafts lists the drafts by name, each validated strictly, with its
// author and created time and, when the catalog has a skill of that name,
// a file-level diff summary against the copy that wins now. It writes
// nothing.
func (e *Engine) Drafts(ctx context.Context) ([]Draft, error) {
	list, err := e.drafts().List(ctx)
	if err != nil {
		return list, err
	}
	if len(list) == 0 {
		return list, nil
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return list, err
	}
	for i := range list {
		w, ok := cat.Lookup(list[i].Name)
		if !ok || w.Skill.Files == nil {
			continue
		}
		fsys, err := list[i].FS()
		if err != nil {
			continue
		}
		sum, err := curator.Compare(ctx, curator.SkillFiles{FS: w.Skill.Files, List: w.Skill.FileList()},
			curator.SkillFiles{FS: fsys, List: list[i].Files})
		if err != nil {
			e.warnf("compare draft %s with %s: %v", list[i].Name, e.copyName(&w.Entry), err)
			continue
		}
		sum.Against = e.copyName(&w.Entry)
		list[i].Diff = &sum
	}
	return list, nil
}

func (e *Engine) copyName(en *layering.Entry) string {
	if c, ok := e.copyOf(en); ok {
		return c.String()
	}
	return en.Layer.String() + "/" + en.Skill.Name
}

// DraftDiff writes the unified diff from the catalog's skill of the
// draft's name (nothing, when there is none) to the draft, in git's
// format. against names the copy compared with, "" for none.
func (e *Engine) DraftDiff(ctx context.Context, w io.Writer, name string) (against string, err error) {
	dr, err := e.drafts().Inspect(ctx, name)
	if err != nil {
		return "", err
	}
	fsys, err := dr.FS()
	if err != nil {
		return "", fmt.Errorf("draft %s: %w", name, err)
	}
	var old curator.SkillFiles
	if w, _, err := e.Lookup(ctx, name); err == nil && w.Skill.Files != nil {
		old = curator.SkillFiles{FS: w.Skill.Files, List: w.Skill.FileList()}
		against = e.copyName(&w.Entry)
	}
	return against, curator.WriteDiff(ctx, w, old, curator.SkillFiles{FS: fsys, List: dr.Files})
}

// PromoteOptions say who approves a promotion and where the draft goes.
type PromoteOptions struct {
	// Approver is who lets the draft through; no approver, no promotion.
	Approver string
	// To is workspace (the default), user, or the name of a git source.
	To string
	// Message is the commit message's first lines for a git source, and
	// the audit's detail for a layer.
	Message string
	// Branch is the branch a git promotion pushes to instead of
	// skillsync/<name> (or, with publish: direct, the tracked branch).
	Branch string
	// Rollout ("10%") and Environments, when set, are written into the
	// draft's metadata.rollout and metadata.environments first (a canary).
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
	// Branch, Commit and Direct say what a git promotion pushed; Path is
	// the skill's folder in the repository.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	Direct bool   `json:"direct,omitempty"`
	Path   string `json:"path,omitempty"`
	// Published is where the draft went after a git promotion.
	Published string `json:"published,omitempty"`
}

// Promote lets the draft name through the gate. The policy comes first:
// an approver is needed, inside promotion.approvers when that is set, and
// the target must be one promotion.targets allows (the workspace and user
// layers when it is not set); a refusal is a *GateError. Then the draft is
// validated strictly, under its lock, and refused with every problem named
// (*curator.InvalidDraftError). A draft that is refused or whose move or
// push fails stays in the drafts.
//
// To workspace or user, the draft moves into that layer in one rename; a
// skill of that name already in the layer is archived first (skillsync
// restore brings it back), never deleted. To a git source, the skill is
// committed under the source's path on top of the revision the workspace
// has, with the approver and message in the commit, and pushed with the
// source's auth to skillsync/<name> (or Branch), or with publish: direct
// to the tracked branch as a fast-forward only; the draft then moves to
// skills/_drafts/.published/. Other kinds of source are not supported.
// Every step is a line of the audit log with the approver, the skill hash
// and, for git, the commit.
func (e *Engine) Promote(ctx context.Context, name string, opts PromoteOptions) (*Promotion, error) {
	return e.promote(ctx, name, opts, false)
}

func (e *Engine) promote(ctx context.Context, name string, opts PromoteOptions, auto bool) (*Promotion, error) {
	policy := e.cfg.Promotion
	to := opts.To
	if to == "" {
		to = config.PromoteWorkspace
	}
	refuse := func(format string, args ...any) error {
		return &GateError{Name: name, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case strings.TrimSpace(opts.Approver) == "":
		return nil, refuse("no approver: a person approves every promotion (--approver WHO)")
	case !auto && !policy.AllowsApprover(opts.Approver):
		return nil, refuse("%s is not an approver in promotion.approvers of %s (%s)", opts.Approver, e.configName(), strings.Join(policy.Approvers, ", "))
	case !policy.AllowsTarget(to):
		return nil, refuse("target %s is not in promotion.targets of %s (allowed: %s)", to, e.configName(), strings.Join(policy.AllowedTargets(), ", "))
	}
	if err := e.stageRollout(name, opts); err != nil {
		return nil, err
	}
	switch to {
	case config.PromoteWorkspace:
		return e.promoteLocal(ctx, name, to, layering.Workspace, e.layout.SkillsDir(), opts)
	case config.PromoteUser:
		dir := e.layout.UserSkillsDir()
		if dir == "" {
			return nil, refuse("the user layer is off: set user: in %s", e.configName())
		}
		return e.promoteLocal(ctx, name, to, layering.User, dir, opts)
	}
	src, ok := e.source(to)
	if !ok {
		return nil, refuse("%s is neither workspace, user nor a source in %s", to, e.configName())
	}
	return e.publish(ctx, name, src, opts)
}

func (e *Engine) configName() string {
	if e.cfg.File == "" {
		return "the config"
	}
	return e.cfg.File
}

// promoteLocal moves the draft into a local layer.
func (e *Engine) promoteLocal(ctx context.Context, name, to string, layer layering.Layer, layerDir string, opts PromoteOptions) (*Promotion, error) {
	var old *curator.Existing
	existing := func() (*curator.Existing, error) {
		cat, err := e.Catalog(ctx)
		if err != nil {
			return nil, err
		}
		w, ok := cat.Lookup(name)
		if !ok {
			return nil, nil
		}
		for _, en := range append([]layering.Entry{w.Entry}, w.Shadowed...) {
			if en.Layer == layer && en.Dir != "" {
				old = &curator.Existing{Name: en.Skill.Name, Dir: en.Dir}
				return old, nil
			}
		}
		return nil, nil
	}
	now := e.now()
	p, err := e.drafts().PromoteLocal(ctx, name, layerDir, existing, nil, now)
	if err != nil {
		return nil, err
	}
	owner := ""
	if layer == layering.User {
		owner = e.cfg.User
	}
	target := layer.String() + "/" + name
	if c, err := curator.NewCopy(layer, owner, name); err == nil {
		target = c.String()
	}
	var events []curator.Event
	if p.Archived != "" {
		events = append(events, curator.Event{TS: now, Actor: e.actor, Op: curator.OpArchived, Target: target,
			From: string(curator.Active), To: string(curator.Archived), BeforeHash: p.ArchivedHash, Approver: opts.Approver,
			Detail: "replaced by the draft " + approvedBy(opts.Approver) + "; moved " + old.Dir + " to " + p.Archived})
	}
	detail := approvedBy(opts.Approver) + "; moved " + p.Draft.Dir + " to " + p.Dir
	if opts.Message != "" {
		detail += ": " + opts.Message
	}
	events = append(events, curator.Event{TS: now, Actor: e.actor, Op: curator.OpPromoted, Target: target, From: "drafts", To: to,
		BeforeHash: p.ArchivedHash, AfterHash: p.Draft.Hash, Approver: opts.Approver, Detail: detail})
	promo := &Promotion{Name: name, Approver: opts.Approver, Target: to, Hash: p.Draft.Hash, Dir: p.Dir, Archived: p.Archived}
	if err := e.Audit().Append(events...); err != nil {
		return promo, fmt.Errorf("promoted %s to %s, but the audit log was not written: %w", name, to, err)
	}
	return promo, nil
}

// publish commits and pushes the draft into the git source src.
func (e *Engine) publish(ctx context.Context, name string, src config.Source, opts PromoteOptions) (*Promotion, error) {
	r, err := e.open(src, "")
	if err != nil {
		return nil, err
	}
	defer closeRepository(r)
	pub, ok := r.(repository.Publisher)
	if !ok {
		return nil, fmt.Errorf("promote %s to %s: not supported for this source kind (%s); promote to a git source, workspace or user", name, src.Name, src.Kind)
	}
	var base repository.Revision
	if m, err := materialize.ReadManifest(e.layout.CacheDir()); err == nil {
		if rec, ok := m.Sources[src.Name]; ok && src.Kind == repository.KindGit {
			base = repository.Revision(rec.Revision)
		}
	}
	now := e.now()
	promo := &Promotion{Name: name, Approver: opts.Approver, Target: src.Name}
	dr, moved, keepErr, err := e.drafts().PromoteElsewhere(ctx, name, func(dr Draft) error {
		fsys, err := dr.FS()
		if err != nil {
			return err
		}
		res, err := pub.Publish(ctx, repository.PublishRequest{
			Name: dr.Name, Files: fsys, List: dr.Files, Base: base, Branch: opts.Branch,
			Direct: src.PublishDirect, Message: commitMessage(dr, opts), Author: opts.Approver, Email: emailOf(opts.Approver), When: now,
		})
		if err != nil {
			if errors.Is(err, repository.ErrNonFastForward) {
				return fmt.Errorf("promote %s to %s: %w; run skillsync sync, check the draft with skillsync drafts diff %s, and promote again; the draft stays in the drafts", name, src.Name, err, name)
			}
			return fmt.Errorf("promote %s to %s: %w; the draft stays in the drafts", name, src.Name, err)
		}
		promo.Branch, promo.Commit, promo.Direct, promo.Path = res.Branch, string(res.Commit), res.Direct, res.Path
		return nil
	}, now)
	if err != nil {
		return nil, err
	}
	promo.Hash, promo.Published = dr.Hash, moved
	if keepErr != nil {
		e.warnf("published %s, but the draft stays in the drafts: %v", name, keepErr)
	}
	how := "review branch"
	if promo.Direct {
		how = "tracked branch"
	}
	detail := fmt.Sprintf("%s; pushed %s to the %s %s of %s at %s", approvedBy(opts.Approver), short(promo.Commit), how, promo.Branch, repository.RedactURL(src.Git), promo.Path)
	if src.Kind != repository.KindGit {
		detail = fmt.Sprintf("%s; written to the %s source %s as revision %s", approvedBy(opts.Approver), src.Kind, src.Name, promo.Commit)
	}
	ev := curator.Event{TS: now, Actor: e.actor, Op: curator.OpPublished, Target: "marketplace:" + src.Name + "/" + name,
		From: "drafts", To: promo.Branch, AfterHash: dr.Hash, Approver: opts.Approver, Commit: promo.Commit, Detail: detail}
	if err := e.Audit().Append(ev); err != nil {
		return promo, fmt.Errorf("published %s to %s, but the audit log was not written: %w", name, src.Name, err)
	}
	return promo, nil
}

// approvedBy is the audit's words for an approval, which the text of
// skillsync audit shows.
func approvedBy(who string) string { return "approved by " + who }

// commitMessage is the message given (or "Add skill NAME") followed by
// trailers a review and a script can read.
func commitMessage(dr Draft, opts PromoteOptions) string {
	subject := strings.TrimSpace(opts.Message)
	if subject == "" {
		subject = "Add skill " + dr.Name
		if dr.Description != "" {
			subject += "\n\n" + dr.Description
		}
	}
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\nSkill: " + dr.Name + "\nSkill-Hash: sha256:" + dr.Hash + "\n")
	if dr.Author != "" {
		b.WriteString("Proposed-by: " + oneLine(dr.Author) + "\n")
	}
	b.WriteString("Approved-by: " + oneLine(opts.Approver) + "\n")
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// emailOf is who's address when who is one, else empty.
func emailOf(who string) string {
	if strings.Contains(who, "@") && !strings.ContainsAny(who, " <>") {
		return who
	}
	return ""
}

// RejectOptions say why a draft is turned down.
type RejectOptions struct {
	Reason string
	// Approver is who rejects; "" leaves it to the actor.
	Approver string
}

// Reject moves the draft name to skills/_drafts/.rejected/<name>-<UTC
// stamp>/, records the reason in the audit log and returns where the
// draft went.
func (e *Engine) Reject(ctx context.Context, name string, opts RejectOptions) (string, error) {
	now := e.now()
	dst, dr, err := e.drafts().Reject(ctx, name, now)
	if err != nil {
		return "", err
	}
	detail := "moved to " + dst
	if opts.Reason != "" {
		detail = opts.Reason + "; " + detail
	}
	if opts.Approver != "" {
		detail = "rejected by " + opts.Approver + ": " + detail
	}
	ev := curator.Event{TS: now, Actor: e.actor, Op: curator.OpRejected, Target: draftTarget(name), From: "drafts", To: "rejected",
		AfterHash: dr.Hash, Approver: opts.Approver, Detail: detail}
	if err := e.Audit().Append(ev); err != nil {
		return dst, fmt.Errorf("rejected %s, but the audit log was not written: %w", name, err)
	}
	return dst, nil
}
