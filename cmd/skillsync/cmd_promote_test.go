package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/mcptest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/mcp"
)

func TestGateFlags(t *testing.T) {
	t.Parallel()
	p, err := parse(t, newPromoteCommand, "pdf", "--approver", "alice", "--to", "team", "-m", "why", "--branch", "b")
	if err != nil || *p != (promoteOptions{name: "pdf", approver: "alice", to: "team", message: "why", branch: "b"}) {
		t.Errorf("promote = %+v, %v", p, err)
	}
	if p, err := parse(t, newPromoteCommand, "pdf"); err != nil || p.to != "workspace" || p.approver != "" {
		t.Errorf("promote defaults = %+v, %v", p, err)
	}
	if _, err := parse(t, newPromoteCommand); exitCode(err) != exitUsage {
		t.Errorf("promote without a name: %v", err)
	}
	pr, err := parse(t, newProposeCommand, "dir", "--name", "n")
	if err != nil || *pr != (proposeOptions{dir: "dir", name: "n"}) {
		t.Errorf("propose = %+v, %v", pr, err)
	}
	r, err := parse(t, newRejectCommand, "pdf", "--reason", "dup", "--approver", "bob")
	if err != nil || *r != (rejectOptions{name: "pdf", reason: "dup", approver: "bob"}) {
		t.Errorf("reject = %+v, %v", r, err)
	}
	if _, err := parse(t, newRejectCommand, "pdf"); exitCode(err) != exitUsage || !strings.Contains(err.Error(), "--reason is required") {
		t.Errorf("reject without a reason: %v", err)
	}
	d, err := parse(t, newDraftsDiffCommand, "pdf")
	if err != nil || !reflect.DeepEqual(*d, draftsDiffOptions{name: "pdf"}) {
		t.Errorf("drafts diff = %+v, %v", d, err)
	}
}

// newSkill writes a skill folder outside the workspace, by the author
// agent-7 that drafts lists, and returns it.
func newSkill(t *testing.T, name, description string) string {
	t.Helper()
	return skilltest.Skill(t, t.TempDir(), name, description, map[string]string{"SKILL.md": skilltest.SkillMD(name, description, "metadata:\n  author: agent-7")})
}

// TestGateSession: propose, list, diff, a refused promotion (exit 1 with
// the reason), a promotion over an existing skill, and a rejection, as a
// user types them.
func TestGateSession(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\ntargets:\n  - dir: .claude/skills\npromotion:\n  approvers: [alice]\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "pdf", "SKILL.md"), "---\nname: pdf\ndescription: Old.\n---\n")

	r := run(t, ws, "propose", newSkill(t, "pdf", "New."))
	if r.code != 0 || !strings.Contains(r.stdout, "proposed pdf in "+filepath.Join(ws, "skills", "_drafts", "pdf")+" (no problem)") {
		t.Fatalf("propose: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "sync"); r.code != 0 || fileExists(filepath.Join(ws, ".claude", "skills", "_drafts")) {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	r = run(t, ws, "drafts")
	if r.code != 0 || !strings.Contains(r.stdout, "pdf") || !strings.Contains(r.stdout, "valid") || !strings.Contains(r.stdout, "agent-7") ||
		!strings.Contains(r.stdout, "+0 ~1 -0 against workspace/pdf") {
		t.Errorf("drafts: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	type draft struct {
		Name, Author, Hash string
		Valid              bool
		Diff               *struct{ Against string }
	}
	ds := decode[[]draft](t, run(t, ws, "drafts", "--json"))
	if len(ds) != 1 || !ds[0].Valid || ds[0].Hash == "" || ds[0].Diff == nil || ds[0].Diff.Against != "workspace/pdf" {
		t.Errorf("drafts --json = %+v", ds)
	}
	r = run(t, ws, "drafts", "diff", "pdf")
	if r.code != 0 || !strings.Contains(r.stdout, "-description: Old.\n+description: New.\n") || !strings.Contains(r.stderr, "a/ is workspace/pdf") {
		t.Errorf("drafts diff: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A flag left out is usage, as reject without --reason is.
	if r := run(t, ws, "promote", "pdf"); r.code != exitUsage || !strings.Contains(r.stderr, "--approver WHO is required") {
		t.Errorf("promote without --approver: exit %d, %s; want exit 2", r.code, r.stderr)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"promote", "pdf", "--approver", "mallory"}, "mallory is not an approver in promotion.approvers"},
		{[]string{"promote", "pdf", "--approver", "alice", "--to", "team"}, "target team is not in promotion.targets"},
		{[]string{"promote", "nothing", "--approver", "alice"}, "no such draft"},
	} {
		r := run(t, ws, tt.args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, %s; want exit 1 saying %q", tt.args, r.code, r.stderr, tt.want)
		}
	}

	r = run(t, ws, "promote", "pdf", "--approver", "alice")
	if r.code != 0 || !strings.Contains(r.stdout, "promoted pdf to workspace") || !strings.Contains(r.stdout, "skillsync restore pdf brings it back") {
		t.Fatalf("promote: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "show", "pdf", "--json"); !strings.Contains(r.stdout, "New.") {
		t.Errorf("show after the promotion: %s", r.stdout)
	}

	// A draft with problems is refused, naming each; a rejection moves it.
	bad := newSkill(t, "Loud", "Upper case.")
	if r := run(t, ws, "propose", bad); r.code != 0 || !strings.Contains(r.stdout, "1 problem") || !strings.Contains(r.stderr, "name-not-lowercase") {
		t.Errorf("propose a draft with a problem: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, ws, "promote", "Loud", "--approver", "alice")
	if r.code != exitFailure || !strings.Contains(r.stderr, "draft Loud is not promoted: 1 problem") || !strings.Contains(r.stderr, "name-not-lowercase") {
		t.Errorf("promote a draft with a problem: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "reject", "Loud"); r.code != exitUsage {
		t.Errorf("reject without a reason: exit %d", r.code)
	}
	r = run(t, ws, "reject", "Loud", "--reason", "shouting")
	if r.code != 0 || !strings.Contains(r.stdout, "rejected Loud: moved to "+filepath.Join(ws, "skills", "_drafts", ".rejected", "Loud-")) {
		t.Errorf("reject: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, ws, "audit")
	for _, op := range []string{"proposed", "promoted", "archived", "rejected"} {
		if !strings.Contains(r.stdout, op) {
			t.Errorf("audit lacks %s:\n%s", op, r.stdout)
		}
	}
}

// TestPromoteToGitPrintsTheBranchAndCommit: a promotion to a git source
// says which branch and commit a review starts from.
func TestPromoteToGitPrintsTheBranchAndCommit(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\npromotion:\n  targets: [team]\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "propose", newSkill(t, "pdf", "Read PDFs.")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := run(t, ws, "promote", "pdf", "--approver", "alice", "--to", "team", "-m", "Add pdf")
	commit := up.Git("rev-parse", "skillsync/pdf")
	if r.code != 0 || !strings.Contains(r.stdout, "branch: skillsync/pdf\ncommit: "+commit+"\n") {
		t.Fatalf("promote: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "drafts"); !strings.Contains(r.stdout, "no drafts") {
		t.Errorf("the published draft is still listed: %s", r.stdout)
	}
	if r := run(t, ws, "audit", "--op", "published", "--json"); !strings.Contains(r.stdout, `"commit": "`+commit+`"`) || !strings.Contains(r.stdout, `"approver": "alice"`) {
		t.Errorf("audit: %s", r.stdout)
	}
}

// The engine's gate takes proposals, so skillsync mcp offers propose_skill.
var _ mcp.Proposer = mcpWorkspace{}

// TestMCPProposeSkillThroughTheEngine: an agent's proposal over MCP lands
// in the drafts with an audit line, and only a person's promote moves it.
func TestMCPProposeSkillThroughTheEngine(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\n")
	cfg, err := config.Load(filepath.Join(ws, "skillsync.yaml"), skillsync.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.New(context.Background(), mcpWorkspace{&liveEngine{eng: skillsync.NewEngine(cfg)}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, srv.MCP())
	res := mcptest.Call(t, cs, "propose_skill", map[string]any{
		"name": "notes", "files": map[string]any{"SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\n# Notes\n"}}, nil)
	if res.IsError {
		t.Fatalf("propose_skill: %s", mcptest.Text(res))
	}
	if !fileExists(filepath.Join(ws, "skills", "_drafts", "notes", "SKILL.md")) {
		t.Fatal("the proposal is not in the drafts")
	}
	r := run(t, ws, "audit", "--op", "proposed")
	if !strings.Contains(r.stdout, "drafts/notes") || !strings.Contains(r.stdout, "from an MCP client") {
		t.Errorf("audit: %s", r.stdout)
	}
	if r := run(t, ws, "promote", "notes", "--approver", "alice"); r.code != 0 {
		t.Errorf("promote: %s", r.stderr)
	}
}

// TestPromoteWhatTheSourceHoldsAlready: a publication whose draft stayed
// behind (a crash after the push) is done the next time: the source holds
// the draft exactly, so promote says so, moves the draft on and exits 0,
// rather than failing on "nothing to publish" for ever.
func TestPromoteWhatTheSourceHoldsAlready(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	up.AcceptPushes()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\n    publish: direct\npromotion:\n  targets: [team]\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	src := newSkill(t, "pdf", "Read PDFs.")
	for i := range 2 {
		if r := run(t, ws, "propose", src); r.code != 0 {
			t.Fatal(r.stderr)
		}
		r := run(t, ws, "promote", "pdf", "--approver", "alice", "--to", "team")
		if i == 0 {
			if r.code != 0 {
				t.Fatalf("promote: %d %s", r.code, r.stderr)
			}
			if r := run(t, ws, "sync"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			continue
		}
		if r.code != 0 || !strings.Contains(r.stdout, "team holds pdf as the draft has it already") {
			t.Fatalf("promote of what the source holds: %d %s %s", r.code, r.stdout, r.stderr)
		}
	}
	if r := run(t, ws, "drafts"); !strings.Contains(r.stdout, "no drafts") {
		t.Errorf("the draft is still listed: %s", r.stdout)
	}
	published, _ := filepath.Glob(filepath.Join(ws, "skills", "_drafts", ".published", "pdf-*"))
	if len(published) != 2 {
		t.Errorf("published drafts: %q, want both", published)
	}
}

// TestMCPProposeSkillRefusedInASubfolder: an MCP server started in a
// subfolder of a workspace (its config above, none here) refuses
// propose_skill, as skillsync propose does there, rather than start a
// second workspace's skills/ in the subfolder.
func TestMCPProposeSkillRefusedInASubfolder(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\n")
	sub := filepath.Join(ws, "src")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.FindIn(hostenv.Env{Dir: sub}, "", skillsync.Kinds())
	if err != nil || cfg.Above == "" {
		t.Fatalf("config in the subfolder: %+v %v", cfg, err)
	}
	srv, err := mcp.New(context.Background(), mcpWorkspace{&liveEngine{eng: skillsync.NewEngine(cfg)}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Connect(t, srv.MCP())
	res := mcptest.Call(t, cs, "propose_skill", map[string]any{
		"name": "notes", "files": map[string]any{"SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\n# Notes\n"}}, nil)
	if !res.IsError || !strings.Contains(mcptest.Text(res), "is in a folder above") {
		t.Errorf("propose_skill in a subfolder: %v %s", res.IsError, mcptest.Text(res))
	}
	if _, err := os.Stat(filepath.Join(sub, "skills")); err == nil {
		t.Error("a skills/ was started in the subfolder")
	}
}
