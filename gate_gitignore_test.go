package skillsync

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
)

// ignoringWorkspace makes a workspace with the config text that is a git
// work tree whose .gitignore keeps .env and node_modules/ out, and a
// workspace skill pdf holding both beside its SKILL.md and notes.md. It
// returns the engine, run with a home of its own, the workspace and the
// skill's folder.
func ignoringWorkspace(t *testing.T, text string) (*Engine, string, string) {
	t.Helper()
	_, ws := workspaceConfig(t, text)
	gittest.NewRepoIn(t, ws, "main")
	skilltest.WriteFile(t, filepath.Join(ws, ".gitignore"), ".env\nnode_modules/\n/.git-store/\n/.skills-cache/\n")
	e := NewEngine(loadConfig(t, filepath.Join(ws, config.FileName)), WithGitStore(filepath.Join(ws, ".git-store")),
		WithHost(ws, []string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}))
	src := skilltest.Skill(t, filepath.Join(ws, "skills"), "pdf", "Read PDFs.", map[string]string{
		"notes.md": "notes\n", ".env": "API_KEY=sk-live-123\n", "node_modules/x/i.js": "j\n"})
	return e, ws, src
}

// assertLeftOut fails when dir lacks SKILL.md or notes.md, or holds the
// .env or node_modules/ that git ignores in the workspace.
func assertLeftOut(t *testing.T, what, dir string) {
	t.Helper()
	for _, name := range []string{"SKILL.md", "notes.md"} {
		if !skilltest.Exists(filepath.Join(dir, name)) {
			t.Errorf("%s lacks %s", what, name)
		}
	}
	for _, name := range []string{".env", "node_modules"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s holds %s, which git ignores in the workspace", what, name)
		}
	}
}

// TestPromoteToGitLeavesOutWhatGitIgnores: a workspace skill proposed and
// promoted to a team's git source (a file:// remote) in a workspace that
// is a git work tree reaches the team's repository without the .env and
// node_modules/ the user's .gitignore keeps out of their own: the
// proposal and the promotion name what they left out, a clone of the
// published repository lacks it, the draft and the skill it came from
// show no difference, and the hash the promotion recorded is the one the
// next sync computes for the published skill. Before, the secret was
// pushed to the team.
func TestPromoteToGitLeavesOutWhatGitIgnores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/one", "First.")
	up.Commit("one")
	e, ws, src := ignoringWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n    publish: direct\n"+
		"promotion:\n  approvers: [alice]\n  targets: [workspace, team]\n")
	mustSync(t, e, SyncOptions{})

	p := propose(t, e, src)
	if !p.Draft.Valid || !slices.Equal(p.Ignored.Names, []string{".env", "node_modules/"}) {
		t.Errorf("proposal = %+v", p)
	}
	assertLeftOut(t, "the draft", p.Draft.Dir)
	var diff strings.Builder
	if against, err := e.Gate().Diff(ctx, &diff, "pdf"); err != nil || against != "workspace/pdf" || diff.String() != "" {
		t.Errorf("diff of the draft against %s = %q, %v; want none", against, diff.String(), err)
	}
	// A .env put into the draft itself stays out as well.
	skilltest.WriteFile(t, filepath.Join(p.Draft.Dir, ".env"), "API_KEY=sk-live-456\n")

	promo, err := e.Gate().Promote(ctx, "pdf", drafts.PromoteOptions{Approver: "alice", To: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if !promo.Direct || promo.Hash != p.Draft.Hash || !slices.Equal(promo.Ignored.Names, []string{".env"}) {
		t.Errorf("promotion = %+v, want the proposal's hash %s", promo, p.Draft.Hash)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	up.Git("clone", "-q", up.URL(), clone)
	assertLeftOut(t, "the published repository", filepath.Join(clone, "skills", "pdf"))

	mustSync(t, e, SyncOptions{})
	m, err := materialize.ReadManifest(e.Layout().CacheDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sources["team"].Skills["pdf"].Hash.String(); got != promo.Hash {
		t.Errorf("hash in the manifest = %s, promotion = %s", got, promo.Hash)
	}
	assertLeftOut(t, "the cache", filepath.Join(ws, ".skills-cache", "team", "pdf"))
}

// TestPublishLeavesOutWhatGitIgnores: publish of a workspace skill in a
// git work tree writes it to a postgres source without what git ignores
// there, and says what it left out; the next sync caches it without
// those files, with the hash of the workspace skill as a draft of it has
// it. Before, the .env went into the team's database.
func TestPublishLeavesOutWhatGitIgnores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := pgtest.Own(t)
	dsn := c.DSNFile(t, "postgres")
	e, ws, src := ignoringWorkspace(t, "repositories:\n  - name: team\n    dsn_file: "+dsn+"\n    create: true\n")
	res, err := e.Gate().Publish(ctx, src, "team", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if res.Skill != "pdf" || !slices.Equal(res.Ignored.Names, []string{".env", "node_modules/"}) {
		t.Errorf("publish = %+v", res)
	}
	mustSync(t, e, SyncOptions{})
	assertLeftOut(t, "the cache", filepath.Join(ws, ".skills-cache", "team", "pdf"))
	m, err := materialize.ReadManifest(e.Layout().CacheDir())
	if err != nil {
		t.Fatal(err)
	}
	p := propose(t, e, src)
	if got := m.Sources["team"].Skills["pdf"].Hash.String(); got != p.Draft.Hash {
		t.Errorf("hash in the manifest = %s, of the workspace skill = %s", got, p.Draft.Hash)
	}
	// Published again, the same files change nothing.
	again, err := e.Gate().Publish(ctx, src, "team", "alice")
	if err != nil || again.Revision != res.Revision {
		t.Errorf("publish again = %+v, %v; want revision %s", again, err, res.Revision)
	}
}

// TestPromoteToTheWorkspaceLeavesOutWhatGitIgnores: promoted to the
// workspace over the skill it was proposed from, a draft holding a .env
// records the hash the next sync computes for the skill (in the target's
// record), and the skill it replaced is archived with the same hash: the
// files git ignores count on neither side, so the audit shows no change
// where there is none.
func TestPromoteToTheWorkspaceLeavesOutWhatGitIgnores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ws, src := ignoringWorkspace(t, "repositories: []\ntargets:\n  - dir: .claude/skills\npromotion:\n  approvers: [alice]\n")
	p := propose(t, e, src)
	skilltest.WriteFile(t, filepath.Join(p.Draft.Dir, ".env"), "API_KEY=sk-live-456\n")
	promo, err := e.Gate().Promote(ctx, "pdf", drafts.PromoteOptions{Approver: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if promo.Hash != p.Draft.Hash || promo.Archived == "" || !slices.Equal(promo.Ignored.Names, []string{".env"}) {
		t.Errorf("promotion = %+v, want the proposal's hash %s", promo, p.Draft.Hash)
	}
	if ev := lastEvent(t, e, drafts.OpPromoted); ev.BeforeHash != promo.Hash || ev.AfterHash != promo.Hash {
		t.Errorf("promoted event = %+v: the same skill but for what git ignores, want %s on both sides", ev, promo.Hash)
	}
	mustSync(t, e, SyncOptions{})
	target := filepath.Join(ws, ".claude", "skills")
	assertLeftOut(t, "the target", filepath.Join(target, "pdf"))
	var rec materialize.TargetRecord
	if err := json.Unmarshal([]byte(skilltest.ReadFile(t, filepath.Join(target, materialize.RecordName))), &rec); err != nil {
		t.Fatal(err)
	}
	if en := rec.Skills["pdf"]; en == nil || en.Hash.String() != promo.Hash {
		t.Errorf("the target's record of pdf = %+v, want hash %s", en, promo.Hash)
	}
}

// TestProposeFromTheGlobalLayerLeavesOutWhatItsGitignoreNames: a skill of
// the global layer (outside any git work tree) proposed as a draft
// leaves out the prod.env the layer's .gitignore names, as the sync of
// that layer does; the proposal says so. Before, the gate judged the
// workspace's, the user's and the dir: sources' folders by their
// layer's rules but not the global one's, and the secret went into the
// draft, on its way to a team's repository.
func TestProposeFromTheGlobalLayerLeavesOutWhatItsGitignoreNames(t *testing.T) {
	t.Parallel()
	global := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(global, ".gitignore"), "*.env\n")
	src := skilltest.Skill(t, global, "mine", "Mine.", map[string]string{
		"prod.env": "API_KEY=sk-live-456\n", "notes.md": "n\n",
	})
	_, ws := workspaceConfig(t, "targets:\n  - dir: .claude/skills\n")
	cfg := loadConfig(t, filepath.Join(ws, config.FileName))
	cfg.Global = global // loadConfig leaves the machine's global layer out
	e := NewEngine(cfg, WithGitStore(filepath.Join(ws, ".git-store")),
		WithHost(ws, []string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}))
	mustSync(t, e, SyncOptions{})
	synced := filepath.Join(ws, ".claude", "skills", "mine")
	if !skilltest.Exists(filepath.Join(synced, "notes.md")) || skilltest.Exists(filepath.Join(synced, "prod.env")) {
		t.Fatalf("the sync of the global layer: %s should hold notes.md and not prod.env", synced)
	}

	p := propose(t, e, src)
	if !skilltest.Exists(filepath.Join(p.Draft.Dir, "notes.md")) {
		t.Errorf("the draft lacks notes.md")
	}
	if _, err := os.Lstat(filepath.Join(p.Draft.Dir, "prod.env")); err == nil {
		t.Errorf("the draft holds prod.env, which the global layer's .gitignore names and its sync leaves out")
	}
	if !slices.Equal(p.Ignored.Names, []string{"prod.env"}) {
		t.Errorf("the proposal names %q as left out, want [prod.env]", p.Ignored.Names)
	}
}
