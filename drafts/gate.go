package drafts

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/diff"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// The audit ops of the promotion gate.
const (
	OpProposed  curator.Op = "proposed"
	OpPromoted  curator.Op = "promoted"
	OpRejected  curator.Op = "rejected"
	OpPublished curator.Op = "published"
)

// AuditLog is where the gate records what it did: *curator.Audit.
type AuditLog interface {
	Append(events ...curator.Event) error
}

// Gate is the promotion gate of one workspace: proposals come into its
// drafts folder, and a draft leaves it promoted into a local layer or a
// source, or rejected, each step a line of the audit log. Its policy
// decides who approves and where drafts may go. A program makes one from
// its config and workspace; the fields are what the gate needs of them.
type Gate struct {
	Folder *Folder
	Policy Policy
	Audit  AuditLog
	// WorkspaceDir is the workspace layer's folder (skills/); UserDir the
	// user layer's, "" when that layer is off.
	WorkspaceDir, UserDir string
	// SourceDirs are the other folders a sync reads (the dir: sources',
	// the global layer's; "" is none): a skill below one is proposed and
	// published as that folder's sync reads it.
	SourceDirs []string
	// Catalog returns the skills that stand now, which a draft is compared
	// with and whose copy in a local layer a promotion archives.
	Catalog func(context.Context) (*layering.Catalog, error)
	// CopyName names a catalog entry as the audit log and the usage file
	// do: <layer>[:<source or user>]/<name>.
	CopyName func(*layering.Entry) string
	// OpenSource opens the configured source name as a promotion target;
	// nil with a nil error when there is no source of that name.
	OpenSource func(name string) (*Target, error)
	// Actor is who makes the changes, for the audit log.
	Actor string
	// Now is the time of each step, UTC to the second.
	Now func() time.Time
	// Warn hears what changes nothing but should be known (a comparison
	// that failed, a draft kept after its publication); nil drops it.
	Warn func(string)
}

// Target is a configured source a draft may be promoted to, as the caller
// opened it. The gate asks Repository for the repository.Publisher
// ability; it never looks at the kind, which only appears in messages.
type Target struct {
	// Name is the source's name; Kind its kind and Location where it is
	// (credentials removed), both for messages and the audit log only.
	Name, Kind, Location string
	// Repository is the opened source. The gate closes it when it is an
	// io.Closer.
	Repository repository.Repository
	// Base is the revision of the source the workspace has, which a
	// publication builds on; "" builds on the tip.
	Base repository.Revision
	// Direct publishes to the tracked branch instead of a review branch
	// (publish: direct).
	Direct bool
}

func (g *Gate) warnf(format string, args ...any) {
	if g.Warn != nil {
		g.Warn(fmt.Sprintf(format, args...))
	}
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
	// Ignored is what git ignores in the folder proposed: it was not
	// copied into the draft, as a sync of the folder would not take it.
	Ignored Ignored `json:"ignored,omitzero"`
}

// layers are the folders of the local layers and dir: sources the gate
// knows, whose sync judges a skill below them by the .gitignore files
// between.
func (g *Gate) layers() []string {
	return append([]string{g.WorkspaceDir, g.UserDir}, g.SourceDirs...)
}

// Propose copies the skill directory dir into the drafts, inspects it
// strictly and records it in the audit log (op proposed, with the skill
// hash). A draft with problems is kept and listed with them. It refuses a
// link out of the skill, a FIFO, a file over max_file_size and a name a
// draft already has; see Folder.ProposeDir.
//
// With Policy.Auto, a draft without problems is promoted at once to the
// first of the policy's targets (the workspace by default), with
// AutoApprover as its approver: the config's author approved it in
// advance. Propose is where that happens, for the CLI, the Go API and MCP
// proposals alike.
func (g *Gate) Propose(ctx context.Context, dir string, opts ProposeOptions) (*Proposal, error) {
	name := opts.Name
	if name == "" {
		name = nameIn(dir)
	}
	// A name given is the draft's name, in its frontmatter too: else the
	// draft could never be promoted (name-mismatch).
	dr, left, err := g.Folder.proposeDir(ctx, dir, name, g.Now(), opts.Name != "" && opts.Name != nameIn(dir), g.layers())
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	from := "from " + abs
	if s := left.String(); s != "" {
		from += " without what git ignores there (" + s + ")"
	}
	p, err := g.proposed(ctx, dr, from)
	if p != nil {
		p.Ignored = left
	}
	return p, err
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

// ProposeFiles writes files (slash-separated path to content) into the
// drafts as name, as Propose does with a directory. It is what the MCP
// server's propose_skill calls: an agent proposes, a person promotes
// (unless Policy.Auto is set). Promoted in the draft says where an
// automatic promotion took it.
func (g *Gate) ProposeFiles(ctx context.Context, name string, files map[string]string) (Draft, error) {
	data := make(map[string][]byte, len(files))
	for p, s := range files {
		data[p] = []byte(s)
	}
	dr, err := g.Folder.ProposeFiles(ctx, name, data, g.Now())
	if err != nil {
		return dr, err
	}
	p, err := g.proposed(ctx, dr, "from an MCP client")
	if err != nil {
		return dr, err
	}
	if p.Promotion != nil {
		p.Draft.Promoted = p.Promotion.Target
	}
	return p.Draft, nil
}

// proposed records a new draft and runs promotion.auto on it.
func (g *Gate) proposed(ctx context.Context, dr Draft, from string) (*Proposal, error) {
	detail := from + "; " + problemCount(dr)
	if err := g.Audit.Append(curator.Event{TS: g.Now(), Actor: g.Actor, Op: OpProposed,
		Target: draftTarget(dr.Name), To: "drafts", AfterHash: dr.Hash, Detail: detail}); err != nil {
		return &Proposal{Draft: dr}, err
	}
	p := &Proposal{Draft: dr}
	if !g.Policy.Auto || !dr.Valid {
		return p, nil
	}
	to := g.Policy.AllowedTargets()[0]
	promo, err := g.promote(ctx, dr.Name, PromoteOptions{Approver: AutoApprover, To: to}, true, nil)
	if err != nil {
		p.AutoError = err.Error()
		g.warnf("promotion.auto did not promote %s to %s: %v; the draft waits", dr.Name, to, err)
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

// List lists the drafts by name, each validated strictly, with its author
// and created time and, when the catalog has a skill of that name, a
// file-level diff summary against the copy that wins now. It writes
// nothing.
func (g *Gate) List(ctx context.Context) ([]Draft, error) {
	list, err := g.Folder.List(ctx)
	if err != nil {
		return list, err
	}
	if len(list) == 0 {
		return list, nil
	}
	cat, err := g.Catalog(ctx)
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
		c, err := diff.Compare(ctx, skillFiles(&w.Skill), diff.Files{FS: fsys, List: list[i].Files})
		if err != nil {
			g.warnf("compare draft %s with %s: %v", list[i].Name, g.CopyName(&w.Entry), err)
			continue
		}
		list[i].Diff = &DiffSummary{Against: g.CopyName(&w.Entry), Added: c.Added, Changed: c.Changed, Removed: c.Removed}
	}
	return list, nil
}

// Diff writes the unified diff from the catalog's skill of the draft's
// name (nothing, when there is none) to the draft, in git's format.
// against names the copy compared with, "" for none.
func (g *Gate) Diff(ctx context.Context, w io.Writer, name string) (against string, err error) {
	dr, err := g.Folder.Inspect(ctx, name)
	if err != nil {
		return "", err
	}
	fsys, err := dr.FS()
	if err != nil {
		return "", fmt.Errorf("draft %s: %w", name, err)
	}
	var old diff.Files
	if cat, err := g.Catalog(ctx); err == nil {
		if w, ok := cat.Lookup(name); ok && w.Skill.Files != nil {
			old = skillFiles(&w.Skill)
			against = g.CopyName(&w.Entry)
		}
	}
	return against, diff.Write(ctx, w, old, diff.Files{FS: fsys, List: dr.Files})
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
func (g *Gate) Reject(ctx context.Context, name string, opts RejectOptions) (string, error) {
	now := g.Now()
	dst, dr, err := g.Folder.Reject(ctx, name, now)
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
	ev := curator.Event{TS: now, Actor: g.Actor, Op: OpRejected, Target: draftTarget(name), From: "drafts", To: "rejected",
		AfterHash: dr.Hash, Approver: opts.Approver, Detail: detail}
	if err := g.Audit.Append(ev); err != nil {
		return dst, fmt.Errorf("rejected %s, but the audit log was not written: %w", name, err)
	}
	return dst, nil
}
