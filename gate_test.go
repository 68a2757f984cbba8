package skillsync

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/workspace"
)

// skillDir writes a skill named name by the author agent-7, with extra
// files, in a fresh folder and returns the folder.
func skillDir(t *testing.T, name, description string, extra map[string]string) string {
	t.Helper()
	files := map[string]string{"SKILL.md": skilltest.SkillMD(name, description, "metadata:\n  author: agent-7")}
	maps.Copy(files, extra)
	return skilltest.Skill(t, t.TempDir(), name, description, files)
}

func propose(t *testing.T, e *Engine, dir string) *drafts.Proposal {
	t.Helper()
	p, err := e.Gate().Propose(context.Background(), dir, drafts.ProposeOptions{})
	if err != nil {
		t.Fatalf("propose: %v", err)
	}
	return p
}

func auditOps(t *testing.T, e *Engine) []curator.Event {
	t.Helper()
	events, bad, err := e.Audit().Read(curator.Event{}.TS, "")
	if err != nil || len(bad) > 0 {
		t.Fatalf("audit: %v %v", err, bad)
	}
	return events
}

func lastEvent(t *testing.T, e *Engine, op string) curator.Event {
	t.Helper()
	var found *curator.Event
	for _, ev := range auditOps(t, e) {
		if ev.Op == op {
			found = &ev
		}
	}
	if found == nil {
		t.Fatalf("no %s event in the audit log", op)
	}
	return *found
}

// TestDraftsStayOutOfEverything: a draft is never in the catalog, the
// prompt, the targets or the cache, from the workspace or from a source
// that holds a _drafts folder of its own; the drafts listing has it.
func TestDraftsStayOutOfEverything(t *testing.T) {
	t.Parallel()
	team := filepath.Join(t.TempDir(), "team")
	skilltest.Skill(t, team, "shared", "The shared skill.", nil)
	skilltest.Skill(t, filepath.Join(team, workspace.DraftsName), "team-draft", "The team-draft skill.", nil)
	e, ws := newWorkspace(t, "repositories:\n  - dir: "+team+"\ntargets:\n  - dir: .claude/skills\n")
	propose(t, e, skillDir(t, "idea", "An idea.", nil))
	mustSync(t, e, SyncOptions{})

	cat, err := e.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range cat.Winners {
		names = append(names, w.Skill.Name)
	}
	if !slices.Contains(names, "shared") || slices.Contains(names, "idea") || slices.Contains(names, "team-draft") {
		t.Errorf("catalog = %v", names)
	}
	prompt, err := layering.Prompt(layering.PromptSkills(cat.Winners), layering.PromptXML, 0)
	if err != nil || strings.Contains(prompt, "idea") || !strings.Contains(prompt, "shared") {
		t.Errorf("prompt = %q, %v", prompt, err)
	}
	for _, p := range []string{".claude/skills/idea", ".claude/skills/team-draft", ".skills-cache/team/idea", ".skills-cache/team/team-draft"} {
		if skilltest.Exists(filepath.Join(ws, p)) {
			t.Errorf("%s exists", p)
		}
	}
	list, err := e.Gate().List(context.Background())
	if err != nil || len(list) != 1 || list[0].Name != "idea" || !list[0].Valid || list[0].Author != "agent-7" || list[0].Diff != nil {
		t.Errorf("drafts = %+v, %v", list, err)
	}
}

// TestPromoteToTheWorkspace: the draft moves into skills/, the skill it
// replaces is archived and restorable, the drafts listing showed the diff
// against it, and each step is one audit line with the approver and hash.
func TestPromoteToTheWorkspace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ws := newWorkspace(t, "repositories: []\npromotion:\n  approvers: [alice]\n")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "pdf", "The pdf skill.", nil)
	p := propose(t, e, skillDir(t, "pdf", "Read and fill PDFs.", map[string]string{"fill.md": "fill\n"}))
	if !p.Draft.Valid || p.Promotion != nil {
		t.Fatalf("proposal = %+v", p)
	}
	list, err := e.Gate().List(ctx)
	if err != nil || len(list) != 1 || list[0].Diff == nil {
		t.Fatalf("drafts = %+v, %v", list, err)
	}
	if d := list[0].Diff; d.Against != "workspace/pdf" || !slices.Equal(d.Added, []string{"fill.md"}) || !slices.Equal(d.Changed, []string{"SKILL.md"}) {
		t.Errorf("diff summary = %+v", d)
	}
	var diff strings.Builder
	if against, err := e.Gate().Diff(ctx, &diff, "pdf"); err != nil || against != "workspace/pdf" ||
		!strings.Contains(diff.String(), "-description: The pdf skill.\n+description: Read and fill PDFs.\n") {
		t.Errorf("diff against %s = %q, %v", against, diff.String(), err)
	}

	promo, err := e.Gate().Promote(ctx, "pdf", drafts.PromoteOptions{Approver: "alice", Message: "reviewed"})
	if err != nil {
		t.Fatal(err)
	}
	if promo.Dir != filepath.Join(ws, "skills", "pdf") || promo.Archived == "" || promo.Hash != p.Draft.Hash {
		t.Fatalf("promotion = %+v", promo)
	}
	w, _, err := e.Lookup(ctx, "pdf")
	if err != nil || w.Skill.Description != "Read and fill PDFs." || w.Layer != layering.Workspace {
		t.Fatalf("pdf after the promotion = %+v, %v", w, err)
	}
	ev := lastEvent(t, e, drafts.OpPromoted)
	if ev.Approver != "alice" || ev.AfterHash != p.Draft.Hash || ev.BeforeHash == "" || ev.Target != "workspace/pdf" {
		t.Errorf("promoted event = %+v", ev)
	}
	if ev := lastEvent(t, e, drafts.OpProposed); ev.AfterHash != p.Draft.Hash {
		t.Errorf("proposed event = %+v", ev)
	}
	if ev := lastEvent(t, e, curator.OpArchived); ev.Approver != "alice" || !strings.Contains(ev.Detail, promo.Archived) {
		t.Errorf("archived event = %+v", ev)
	}
	// The replaced skill comes back once the new one is moved away.
	if _, err := e.Restore(ctx, "pdf"); err == nil {
		t.Error("restore over the promoted skill was allowed")
	}
	if err := os.Rename(promo.Dir, filepath.Join(t.TempDir(), "pdf")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Restore(ctx, "pdf"); err != nil {
		t.Fatalf("restore the replaced skill: %v", err)
	}
	if w, _, err := e.Lookup(ctx, "pdf"); err != nil || w.Skill.Description != "The pdf skill." {
		t.Errorf("restored pdf = %+v, %v", w, err)
	}
}

// TestTheGateRefuses: no approver, an approver or a target outside the
// policy, and a draft with problems are each refused with the reason, and
// the draft stays.
func TestTheGateRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n  - name: other\n    git: "+up.URL()+"\npromotion:\n  approvers: [alice, bob]\n  targets: [workspace, team]\n")
	propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	tests := []struct {
		opts drafts.PromoteOptions
		want string
	}{
		{drafts.PromoteOptions{}, "no approver"},
		{drafts.PromoteOptions{Approver: "mallory"}, "mallory is not an approver in promotion.approvers"},
		{drafts.PromoteOptions{Approver: "alice", To: "user"}, "target user is not in promotion.targets"},
		{drafts.PromoteOptions{Approver: "alice", To: "other"}, "target other is not in promotion.targets"},
	}
	for _, tt := range tests {
		_, err := e.Gate().Promote(ctx, "pdf", tt.opts)
		var ge *drafts.GateError
		if !errors.As(err, &ge) || !drafts.IsRefused(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("promote %+v = %v, want a refusal saying %q", tt.opts, err, tt.want)
		}
		var ue *UsageError
		if errors.As(err, &ue) {
			t.Errorf("a refusal is a usage error: %v", err)
		}
	}
	// A draft an agent wrote straight into the folder, with a link out, a
	// FIFO and a file over max_file_size, is refused with each problem.
	bad := skilltest.Skill(t, filepath.Join(ws, "skills", "_drafts"), "evil", "The evil skill.", nil)
	if err := os.Symlink("/etc/passwd", filepath.Join(bad, "leak")); err != nil {
		t.Fatal(err)
	}
	if err := platform.Mkfifo(filepath.Join(bad, "pipe")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "big"), make([]byte, e.Config().Limits.MaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.Gate().Promote(ctx, "evil", drafts.PromoteOptions{Approver: "alice"})
	var invalid *drafts.InvalidError
	if !errors.As(err, &invalid) || !drafts.IsRefused(err) {
		t.Fatalf("promote a hostile draft = %v", err)
	}
	for _, rule := range []string{"draft-symlink", "file-not-regular", "file-too-large"} {
		if !strings.Contains(err.Error(), rule) {
			t.Errorf("the refusal does not name %s: %v", rule, err)
		}
	}
	for _, d := range []string{"pdf", "evil"} {
		if !skilltest.Exists(filepath.Join(ws, "skills", "_drafts", d, "SKILL.md")) {
			t.Errorf("draft %s is gone after a refusal", d)
		}
	}
	for _, ev := range auditOps(t, e) {
		if ev.Op == drafts.OpPromoted || ev.Op == drafts.OpPublished {
			t.Errorf("a refusal was audited as %+v", ev)
		}
	}
}

func TestPromoteToADirSourceIsNotSupported(t *testing.T) {
	t.Parallel()
	team := t.TempDir()
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    dir: "+team+"\npromotion:\n  targets: [team]\n")
	propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	_, err := e.Gate().Promote(context.Background(), "pdf", drafts.PromoteOptions{Approver: "alice", To: "team"})
	if err == nil || !strings.Contains(err.Error(), "not supported for this source kind (dir)") || drafts.IsRefused(err) {
		t.Errorf("promote to a dir source = %v", err)
	}
}

// gitWorkspace is a workspace whose source team is a pushable repository
// served over smart HTTP with basic auth, synced once.
func gitWorkspace(t *testing.T, publish string) (*Engine, string, *gittest.Repo) {
	t.Helper()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	_, url := up.ServeHTTP("skills", "x-access-token", "s3cret-token")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	text := "repositories:\n  - name: team\n    git: " + url + "\n    auth:\n      password_env: TEAM_TOKEN\n"
	if publish != "" {
		text += "    publish: " + publish + "\n"
	}
	text += "promotion:\n  approvers: [alice, bob]\n  targets: [workspace, team]\n"
	_, ws := workspaceConfig(t, text)
	e := withToken(t, ws, "s3cret-token")
	mustSync(t, e, SyncOptions{})
	return e, ws, up
}

// withToken is the engine over ws's config, as newWorkspace makes it,
// run in an environment that holds TEAM_TOKEN=token: the token reaches
// the source without changing the process's environment.
func withToken(t *testing.T, ws, token string) *Engine {
	t.Helper()
	path := filepath.Join(ws, config.FileName)
	return NewEngine(loadConfig(t, path), WithGitStore(filepath.Join(ws, ".git-store")),
		WithHost(ws, []string{"HOME=" + t.TempDir(), "TEAM_TOKEN=" + token}))
}

// TestPromoteToAGitSource: the skill goes to a review branch with the
// approver in the commit, the draft moves to .published, the audit line
// has the commit and no token; after a merge and a sync the skill is in
// the catalog with the hash the audit recorded.
func TestPromoteToAGitSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ws, up := gitWorkspace(t, "")
	p := propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	promo, err := e.Gate().Promote(ctx, "pdf", drafts.PromoteOptions{Approver: "alice", To: "team", Message: "Add the PDF skill"})
	if err != nil {
		t.Fatal(err)
	}
	if promo.Branch != "skillsync/pdf" || promo.Direct || promo.Path != "skills/pdf" || len(promo.Commit) != 40 {
		t.Fatalf("promotion = %+v", promo)
	}
	msg := up.Git("log", "-1", "--format=%an|%B", "skillsync/pdf")
	for _, want := range []string{"alice|Add the PDF skill", "Approved-by: alice", "Proposed-by: agent-7", "Skill-Hash: sha256:" + p.Draft.Hash} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message %q lacks %q", msg, want)
		}
	}
	if skilltest.Exists(filepath.Join(ws, "skills", "_drafts", "pdf")) || promo.Published == "" || !skilltest.Exists(filepath.Join(promo.Published, "SKILL.md")) {
		t.Errorf("the draft was not moved to .published: %+v", promo)
	}
	ev := lastEvent(t, e, drafts.OpPublished)
	if ev.Commit != promo.Commit || ev.Approver != "alice" || ev.AfterHash != p.Draft.Hash || ev.To != "skillsync/pdf" {
		t.Errorf("published event = %+v", ev)
	}
	assertNoSecret(t, ws)

	up.Git("merge", "-q", "--ff-only", "skillsync/pdf")
	mustSync(t, e, SyncOptions{})
	m, err := materialize.ReadManifest(e.Layout().CacheDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sources["team"].Skills["pdf"].Hash.String(); got != p.Draft.Hash {
		t.Errorf("hash in the manifest = %s, audit = %s", got, p.Draft.Hash)
	}
}

// TestPromoteDirectAndTheRemoteMovedOn: publish: direct pushes to main;
// once someone else pushed, the next promotion is refused as a
// non-fast-forward with the draft kept; after a sync it goes through.
func TestPromoteDirectAndTheRemoteMovedOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ws, up := gitWorkspace(t, "direct")
	propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	promo, err := e.Gate().Promote(ctx, "pdf", drafts.PromoteOptions{Approver: "bob", To: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if promo.Branch != "main" || !promo.Direct || up.Git("rev-parse", "main") != promo.Commit {
		t.Fatalf("promotion = %+v, main = %s", promo, up.Git("rev-parse", "main"))
	}

	up.Git("reset", "-q", "--hard", "main")
	up.Skill("skills/theirs", "Someone else's.")
	theirs := up.Commit("theirs")
	propose(t, e, skillDir(t, "notes", "Take notes.", nil))
	_, err = e.Gate().Promote(ctx, "notes", drafts.PromoteOptions{Approver: "bob", To: "team"})
	if err == nil || !strings.Contains(err.Error(), "not a fast-forward") || !strings.Contains(err.Error(), "the draft stays in the drafts") {
		t.Fatalf("promote after the remote moved on = %v", err)
	}
	if up.Git("rev-parse", "main") != theirs || !skilltest.Exists(filepath.Join(ws, "skills", "_drafts", "notes", "SKILL.md")) {
		t.Fatal("a refused push moved main or lost the draft")
	}
	mustSync(t, e, SyncOptions{})
	if _, err := e.Gate().Promote(ctx, "notes", drafts.PromoteOptions{Approver: "bob", To: "team"}); err != nil {
		t.Fatalf("promote after a sync: %v", err)
	}
	if got := up.Git("rev-parse", "main^"); got != theirs {
		t.Errorf("the promotion does not build on theirs: parent %s", got)
	}
	assertNoSecret(t, ws)
}

// TestPromoteWithAWrongToken: the push is refused, the message names the
// setting to check and not the token, and the draft stays.
func TestPromoteWithAWrongToken(t *testing.T) {
	t.Parallel()
	e, ws, up := gitWorkspace(t, "")
	propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	e = withToken(t, ws, "wrong-token-789")
	_, err := e.Gate().Promote(context.Background(), "pdf", drafts.PromoteOptions{Approver: "alice", To: "team"})
	if err == nil || !strings.Contains(err.Error(), "check password_env TEAM_TOKEN") || strings.Contains(err.Error(), "wrong-token-789") {
		t.Fatalf("promote with a wrong token = %v", err)
	}
	if !skilltest.Exists(filepath.Join(ws, "skills", "_drafts", "pdf", "SKILL.md")) {
		t.Error("the draft is gone")
	}
	if got := up.Git("branch", "--list", "skillsync/*"); got != "" {
		t.Errorf("branches = %q", got)
	}
	assertNoSecret(t, ws)
}

// TestConcurrentPromotionsOfTwoDrafts: two drafts promoted at once, one to
// the workspace and one to the git source, both land and both are audited.
func TestConcurrentPromotionsOfTwoDrafts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ws, up := gitWorkspace(t, "")
	for _, n := range []string{"one-more", "two-more", "three-more"} {
		propose(t, e, skillDir(t, n, "A skill.", nil))
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, job := range []struct{ name, to string }{{"one-more", "workspace"}, {"two-more", "team"}, {"three-more", "team"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.Gate().Promote(ctx, job.name, drafts.PromoteOptions{Approver: "alice", To: job.to})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if !skilltest.Exists(filepath.Join(ws, "skills", "one-more", "SKILL.md")) {
		t.Error("one-more is not in the workspace")
	}
	if got := up.Git("branch", "--list", "--format=%(refname:short)", "skillsync/*"); got != "skillsync/three-more\nskillsync/two-more" {
		t.Errorf("branches = %q", got)
	}
	n := 0
	for _, ev := range auditOps(t, e) {
		if ev.Op == drafts.OpPromoted || ev.Op == drafts.OpPublished {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d promotion lines in the audit log, want 3", n)
	}
}

func TestRejectAndAutoPromote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ws := newWorkspace(t, "repositories: []\n")
	propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	dst, err := e.Gate().Reject(ctx, "pdf", drafts.RejectOptions{Reason: "duplicates docs", Approver: "alice"})
	if err != nil || !strings.HasPrefix(dst, filepath.Join(ws, "skills", "_drafts", ".rejected", "pdf-")) {
		t.Fatalf("reject = %s, %v", dst, err)
	}
	if ev := lastEvent(t, e, drafts.OpRejected); !strings.Contains(ev.Detail, "duplicates docs") || ev.Approver != "alice" || ev.AfterHash == "" {
		t.Errorf("rejected event = %+v", ev)
	}

	e, ws = newWorkspace(t, "repositories: []\npromotion:\n  approvers: [alice]\n  auto: true\n")
	p := propose(t, e, skillDir(t, "pdf", "Read PDFs.", nil))
	if p.Promotion == nil || p.Promotion.Target != "workspace" || !skilltest.Exists(filepath.Join(ws, "skills", "pdf", "SKILL.md")) {
		t.Fatalf("auto proposal = %+v", p)
	}
	if ev := lastEvent(t, e, drafts.OpPromoted); ev.Approver != drafts.AutoApprover {
		t.Errorf("auto promoted event = %+v", ev)
	}
	// A draft with a problem waits for a person, even with auto.
	p = propose(t, e, skillDir(t, "Loud", "Upper case.", nil))
	if p.Promotion != nil || p.Draft.Valid || !skilltest.Exists(filepath.Join(ws, "skills", "_drafts", "Loud")) {
		t.Errorf("auto promoted a draft with problems: %+v", p)
	}
}

// assertNoSecret fails when the test token is anywhere in the workspace:
// the audit log, the drafts, the cache, the lock.
func assertNoSecret(t *testing.T, ws string) {
	t.Helper()
	_ = filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeType != 0 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil && (strings.Contains(string(data), "s3cret-token") || strings.Contains(string(data), "wrong-token")) {
			t.Errorf("a token is in %s", p)
		}
		return nil
	})
}
