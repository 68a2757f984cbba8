package drafts

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// gateTest is a gate on a fresh workspace with a user layer (ann's), a
// catalog read from its layers, a real audit log, and the sources in
// sources.
type gateTest struct {
	*Gate
	layout  workspace.Layout
	sources map[string]func() (*Target, error)

	mu       sync.Mutex
	warnings []string
}

func newGate(t *testing.T, policy Policy) *gateTest {
	t.Helper()
	l := workspace.New(t.TempDir(), "ann")
	gt := &gateTest{layout: l, sources: map[string]func() (*Target, error){}}
	layers := []struct {
		layer layering.Layer
		dir   string
	}{{layering.Workspace, l.SkillsDir()}, {layering.User, l.UserSkillsDir()}}
	catalog := func(ctx context.Context) (*layering.Catalog, error) {
		var inputs []layering.Input
		for _, ly := range layers {
			skills, _, err := dir.NewLocal(ly.layer.String(), ly.dir, repository.Options{}).Skills(ctx)
			if err != nil {
				return nil, err
			}
			dir := ly.dir
			inputs = append(inputs, layering.Input{Layer: ly.layer, Source: ly.layer.String(), Skills: skills,
				Dir: func(s skill.Skill) string { return filepath.Join(dir, filepath.FromSlash(s.Path)) }})
		}
		return layering.Build(inputs, layering.Options{}), nil
	}
	copyName := func(en *layering.Entry) string {
		owner := ""
		switch en.Layer {
		case layering.Marketplace:
			owner = en.Source
		case layering.User:
			owner = "ann"
		}
		c, err := curator.NewCopy(en.Layer, owner, en.Skill.Name)
		if err != nil {
			return en.Layer.String() + "/" + en.Skill.Name
		}
		return c.String()
	}
	gt.Gate = &Gate{
		Folder:       NewFolder(l, 1<<20),
		Policy:       policy,
		Audit:        curator.NewAudit(l.SkillsDir()),
		WorkspaceDir: l.SkillsDir(),
		UserDir:      l.UserSkillsDir(),
		Catalog:      catalog,
		CopyName:     copyName,
		OpenSource: func(name string) (*Target, error) {
			if open, ok := gt.sources[name]; ok {
				return open()
			}
			return nil, nil
		},
		Actor: "user:test",
		Now:   func() time.Time { return now },
		Warn: func(s string) {
			gt.mu.Lock()
			defer gt.mu.Unlock()
			gt.warnings = append(gt.warnings, s)
		},
	}
	return gt
}

// events returns the audit log's lines of op ("" for all).
func (gt *gateTest) events(t *testing.T, op string) []curator.Event {
	t.Helper()
	events, bad, err := curator.NewAudit(gt.layout.SkillsDir()).Read(time.Time{}, op)
	if err != nil || len(bad) > 0 {
		t.Fatalf("audit: %v %v", err, bad)
	}
	return events
}

// propose proposes a fresh skill directory name, whose folder is named
// otherwise: the draft takes the name its SKILL.md gives.
func (gt *gateTest) propose(t *testing.T, name, description string) *Proposal {
	t.Helper()
	dir := skilltest.Skill(t, t.TempDir(), "folder-"+name, description,
		map[string]string{"SKILL.md": skilltest.SkillMD(name, description, "metadata:\n  author: agent-7")})
	p, err := gt.Propose(context.Background(), dir, ProposeOptions{})
	if err != nil {
		t.Fatalf("propose %s: %v", name, err)
	}
	return p
}

func (gt *gateTest) draftStays(t *testing.T, name string) {
	t.Helper()
	if !skilltest.Exists(filepath.Join(gt.layout.DraftsDir(), name, "SKILL.md")) {
		t.Errorf("draft %s is gone", name)
	}
}

// TestPromoteToALayer: to either local layer, the drafts listing and the
// diff compare the draft with the copy that wins now; the promotion
// archives the skill standing in that layer and records both steps with
// the approver, the hashes and the copy's name.
func TestPromoteToALayer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		to, copy string
		dir      func(workspace.Layout) string
	}{
		{TargetWorkspace, "workspace/pdf", workspace.Layout.SkillsDir},
		{TargetUser, "user:ann/pdf", workspace.Layout.UserSkillsDir},
	} {
		t.Run(tt.to, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			gt := newGate(t, Policy{Approvers: []string{"alice"}})
			layerDir := tt.dir(gt.layout)
			skilltest.Skill(t, layerDir, "pdf", "The pdf skill.", map[string]string{"gone.md": "old\n"})
			p := gt.propose(t, "pdf", "Read and fill PDFs.")
			if p.Draft.Name != "pdf" || !p.Draft.Valid || p.Promotion != nil {
				t.Fatalf("proposal = %+v", p)
			}
			if ev := gt.events(t, OpProposed); len(ev) != 1 || ev[0].AfterHash != p.Draft.Hash || ev[0].Target != "drafts/pdf" || !strings.Contains(ev[0].Detail, "no problem") {
				t.Errorf("proposed = %+v", ev)
			}

			list, err := gt.List(ctx)
			if err != nil || len(list) != 1 || list[0].Diff == nil {
				t.Fatalf("drafts = %+v, %v", list, err)
			}
			if d := list[0].Diff; d.Against != tt.copy || !slices.Equal(d.Changed, []string{"SKILL.md"}) || !slices.Equal(d.Removed, []string{"gone.md"}) || len(d.Added) != 0 {
				t.Errorf("summary = %+v", d)
			}
			var diff strings.Builder
			against, err := gt.Diff(ctx, &diff, "pdf")
			if err != nil || against != tt.copy || !strings.Contains(diff.String(), "+description: Read and fill PDFs.\n") || !strings.Contains(diff.String(), "deleted file mode 100644") {
				t.Errorf("diff against %s = %q, %v", against, diff.String(), err)
			}

			promo, err := gt.Promote(ctx, "pdf", PromoteOptions{Approver: "alice", To: tt.to, Message: "reviewed"})
			if err != nil {
				t.Fatal(err)
			}
			if promo.Target != tt.to || promo.Dir != filepath.Join(layerDir, "pdf") || promo.Archived == "" || promo.Hash != p.Draft.Hash || promo.Commit != "" {
				t.Fatalf("promotion = %+v", promo)
			}
			archived, promoted := gt.events(t, curator.OpArchived), gt.events(t, OpPromoted)
			if len(archived) != 1 || archived[0].Target != tt.copy || archived[0].Approver != "alice" || !strings.Contains(archived[0].Detail, promo.Archived) {
				t.Errorf("archived = %+v", archived)
			}
			if len(promoted) != 1 || promoted[0].Target != tt.copy || promoted[0].To != tt.to || promoted[0].AfterHash != p.Draft.Hash ||
				promoted[0].BeforeHash == "" || promoted[0].BeforeHash != archived[0].BeforeHash || !strings.HasSuffix(promoted[0].Detail, ": reviewed") {
				t.Errorf("promoted = %+v", promoted)
			}
			if list, err := gt.List(ctx); err != nil || len(list) != 0 {
				t.Errorf("drafts after the promotion = %+v, %v", list, err)
			}
		})
	}
}

// closingLocal is a dir source that records being closed.
type closingLocal struct {
	*dir.Local
	closed *bool
}

func (c closingLocal) Close() error { *c.closed = true; return nil }

// TestTheGateRefuses: what the policy or the workspace does not allow is
// refused before anything moves, the draft stays and nothing is audited as
// promoted; a source that takes no drafts is a failure, not a refusal,
// and is closed.
func TestTheGateRefuses(t *testing.T) {
	t.Parallel()
	failing := errors.New("the database is down")
	tests := []struct {
		name    string
		policy  Policy
		userOff bool
		opts    PromoteOptions
		want    string
		refused bool
	}{
		{"no approver", Policy{}, false, PromoteOptions{}, "no approver", true},
		{"an approver outside the list", Policy{Approvers: []string{"alice"}}, false, PromoteOptions{Approver: "mallory"}, "mallory is not an approver", true},
		{"the user layer is off", Policy{}, true, PromoteOptions{Approver: "alice", To: TargetUser}, "the user layer is off: set user: in the config", true},
		{"no such source", Policy{Targets: []string{"gone"}, Config: "skillsync.yaml"}, false, PromoteOptions{Approver: "alice", To: "gone"}, "gone is neither workspace, user nor a source in skillsync.yaml", true},
		{"a source that takes no drafts", Policy{Targets: []string{"team"}}, false, PromoteOptions{Approver: "alice", To: "team"}, "promote pdf to team: not supported for this source kind (dir)", false},
		{"a source that does not open", Policy{Targets: []string{"down"}}, false, PromoteOptions{Approver: "alice", To: "down"}, failing.Error(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gt := newGate(t, tt.policy)
			if tt.userOff {
				gt.UserDir = ""
			}
			closed := false
			gt.sources["team"] = func() (*Target, error) {
				return &Target{Name: "team", Kind: "dir", Repository: closingLocal{dir.NewLocal("team", t.TempDir(), repository.Options{}), &closed}}, nil
			}
			gt.sources["down"] = func() (*Target, error) { return nil, failing }
			gt.propose(t, "pdf", "Read PDFs.")
			_, err := gt.Promote(context.Background(), "pdf", tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || IsRefused(err) != tt.refused {
				t.Fatalf("promote = %v, want %q (refused %v)", err, tt.want, tt.refused)
			}
			if tt.opts.To == "team" && !closed {
				t.Error("the source was left open")
			}
			gt.draftStays(t, "pdf")
			if ev := gt.events(t, ""); len(ev) != 1 || ev[0].Op != OpProposed {
				t.Errorf("audit after a refusal = %+v", ev)
			}
		})
	}
}

// TestAutoPromotion: promotion.auto promotes a valid draft as it is
// proposed, approved in advance whatever the approvers list says; a draft
// with problems, or one whose target fails, waits with the reason.
func TestAutoPromotion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gt := newGate(t, Policy{Approvers: []string{"alice"}, Auto: true})
	p := gt.propose(t, "pdf", "Read PDFs.")
	if p.Promotion == nil || p.Promotion.Target != TargetWorkspace || p.Promotion.Approver != AutoApprover || p.AutoError != "" {
		t.Fatalf("proposal = %+v", p)
	}
	if ev := gt.events(t, OpPromoted); len(ev) != 1 || ev[0].Approver != AutoApprover {
		t.Errorf("promoted = %+v", ev)
	}
	if p := gt.propose(t, "Loud", "Upper case."); p.Promotion != nil || p.Draft.Valid || p.AutoError != "" {
		t.Errorf("auto promoted a draft with problems: %+v", p)
	}
	gt.draftStays(t, "Loud")

	// Through the MCP server's door, Promoted says where it went.
	dr, err := gt.ProposeFiles(ctx, "notes", map[string]string{"SKILL.md": skilltest.SkillMD("notes", "Take notes.")})
	if err != nil || dr.Promoted != TargetWorkspace || !skilltest.Exists(filepath.Join(gt.layout.SkillsDir(), "notes", "SKILL.md")) {
		t.Errorf("proposed files = %+v, %v", dr, err)
	}

	gt = newGate(t, Policy{Targets: []string{"team"}, Auto: true})
	gt.sources["team"] = func() (*Target, error) {
		return &Target{Name: "team", Kind: "dir", Repository: dir.NewLocal("team", t.TempDir(), repository.Options{})}, nil
	}
	p = gt.propose(t, "pdf", "Read PDFs.")
	if p.Promotion != nil || !strings.Contains(p.AutoError, "not supported for this source kind (dir)") {
		t.Errorf("proposal = %+v", p)
	}
	gt.draftStays(t, "pdf")
	if len(gt.warnings) != 1 || !strings.Contains(gt.warnings[0], "promotion.auto did not promote pdf to team") {
		t.Errorf("warnings = %q", gt.warnings)
	}
}

// TestPublishToAGitSource: the gate hands the draft to the source's
// Publisher on top of the revision the workspace has, with the commit
// message's trailers, moves it to .published and records the commit and
// where it went.
func TestPublishToAGitSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/one", "First.")
	base := up.Commit("one")
	g := git.NewGit(git.GitConfig{Source: "team", URL: up.URL(), StoreRoot: t.TempDir()}, repository.Options{})
	if _, err := g.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	up.Skill("skills/two", "Second, after the workspace synced.")
	up.Commit("two")

	gt := newGate(t, Policy{Targets: []string{"team"}})
	gt.sources["team"] = func() (*Target, error) {
		return &Target{Name: "team", Kind: "git", Location: "file:///team.git", Repository: g, Base: repository.Revision(base)}, nil
	}
	p := gt.propose(t, "pdf", "Read PDFs.")
	promo, err := gt.Promote(ctx, "pdf", PromoteOptions{Approver: "alice@example.com", To: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if promo.Branch != "skillsync/pdf" || promo.Direct || promo.Path != "skills/pdf" || promo.Hash != p.Draft.Hash ||
		!strings.HasPrefix(promo.Published, gt.layout.PublishedDir()) || !skilltest.Exists(filepath.Join(promo.Published, "SKILL.md")) {
		t.Fatalf("promotion = %+v", promo)
	}
	if got := up.Git("rev-parse", "skillsync/pdf^"); got != base {
		t.Errorf("the commit builds on %s, want the workspace's %s", got, base)
	}
	msg := up.Git("log", "-1", "--format=%an <%ae>|%B", "skillsync/pdf")
	for _, want := range []string{"alice@example.com <alice@example.com>|Add skill pdf", "Proposed-by: agent-7", "Approved-by: alice@example.com", "Skill-Hash: sha256:" + p.Draft.Hash} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message %q lacks %q", msg, want)
		}
	}
	ev := gt.events(t, OpPublished)
	want := "approved by alice@example.com; pushed " + promo.Commit[:12] + " to the review branch skillsync/pdf of file:///team.git at skills/pdf"
	if len(ev) != 1 || ev[0].Detail != want || ev[0].Commit != promo.Commit || ev[0].To != "skillsync/pdf" || ev[0].Target != "marketplace:team/pdf" {
		t.Errorf("published = %+v, want detail %q", ev, want)
	}
}

func TestPublishedDetail(t *testing.T) {
	t.Parallel()
	tgt := &Target{Name: "team", Kind: "postgres", Location: "https://git.example.com/acme/skills.git"}
	for _, tt := range []struct {
		p    Promotion
		want string
	}{
		{Promotion{Approver: "bob", Commit: "0123456789abcdef", Branch: "main", Direct: true, Path: "skills/pdf"},
			"approved by bob; pushed 0123456789ab to the tracked branch main of https://git.example.com/acme/skills.git at skills/pdf"},
		{Promotion{Approver: "bob", Commit: "42", Path: "pdf"},
			"approved by bob; written to the postgres source team as revision 42"},
	} {
		if got := publishedDetail(&tt.p, tgt); got != tt.want {
			t.Errorf("detail = %q, want %q", got, tt.want)
		}
	}
}

func TestReject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gt := newGate(t, Policy{})
	p := gt.propose(t, "pdf", "Read PDFs.")
	dst, err := gt.Reject(ctx, "pdf", RejectOptions{Reason: "duplicates docs", Approver: "alice"})
	if err != nil || dst != filepath.Join(gt.layout.RejectedDir(), "pdf-20261130T120000Z") {
		t.Fatalf("reject = %s, %v", dst, err)
	}
	ev := gt.events(t, OpRejected)
	if len(ev) != 1 || ev[0].Detail != "rejected by alice: duplicates docs; moved to "+dst || ev[0].AfterHash != p.Draft.Hash || ev[0].Target != "drafts/pdf" {
		t.Errorf("rejected = %+v", ev)
	}
	if _, err := gt.Reject(ctx, "pdf", RejectOptions{}); !errors.Is(err, ErrNoDraft) {
		t.Errorf("reject again = %v", err)
	}
}

// TestPromoteRefusesAFullRefAsBranch: --branch refs/heads/main would push
// to refs/heads/refs/heads/main; it is refused before anything is pushed,
// naming the branch to give instead, and the draft stays.
func TestPromoteRefusesAFullRefAsBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/one", "First.")
	base := up.Commit("one")
	g := git.NewGit(git.GitConfig{Source: "team", URL: up.URL(), StoreRoot: t.TempDir()}, repository.Options{})
	if _, err := g.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	gt := newGate(t, Policy{Targets: []string{"team"}})
	gt.sources["team"] = func() (*Target, error) {
		return &Target{Name: "team", Kind: "git", Location: "file:///team.git", Repository: g, Base: repository.Revision(base)}, nil
	}
	gt.propose(t, "pdf", "Read PDFs.")
	for _, b := range []string{"refs/heads/main", "a..b", "has space"} {
		_, err := gt.Promote(ctx, "pdf", PromoteOptions{Approver: "alice@example.com", To: "team", Branch: b})
		if err == nil || !strings.Contains(err.Error(), b) {
			t.Errorf("branch %q: err = %v", b, err)
		}
	}
	_, err := gt.Promote(ctx, "pdf", PromoteOptions{Approver: "alice@example.com", To: "team", Branch: "refs/heads/main"})
	if err == nil || !strings.Contains(err.Error(), `give the branch name alone ("main")`) {
		t.Errorf("err = %v", err)
	}
	if refs := up.Git("for-each-ref", "--format=%(refname)"); strings.Contains(refs, "refs/heads/refs/") {
		t.Errorf("the remote has %s", refs)
	}
	gt.draftStays(t, "pdf")
}
