package skillsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/workspace"
)

// TestTwoWorkspacesOneTarget: two workspaces keeping one target folder
// would each remove the skills the other placed there. The second is
// refused that target, which it leaves as it is, while its other targets
// are synced; once the first workspace is gone (no cache), the second
// takes the target over.
func TestTwoWorkspacesOneTarget(t *testing.T) {
	t.Parallel()
	shared := filepath.Join(t.TempDir(), "agent-skills")
	config := "repositories: []\ntargets:\n  - dir: " + shared + "\n  - dir: own\n"
	a, wsA := newWorkspace(t, config)
	b, wsB := newWorkspace(t, config)
	skilltest.WriteFile(t, filepath.Join(wsA, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A's skill.\n---\n")
	skilltest.WriteFile(t, filepath.Join(wsB, "skills", "beta", "SKILL.md"), "---\nname: beta\ndescription: B's skill.\n---\n")
	mustSync(t, a, SyncOptions{})

	rep, err := b.Sync(context.Background(), SyncOptions{})
	if !errors.Is(err, materialize.ErrTargetTaken) || !strings.Contains(err.Error(), wsA) || !strings.Contains(err.Error(), shared) {
		t.Fatalf("B's sync into A's target: %v, want ErrTargetTaken naming %s and %s", err, shared, wsA)
	}
	// The keeper may be the user-wide workspace, which no sync in its own
	// folder reaches.
	if !strings.Contains(err.Error(), "skillsync -g sync") {
		t.Errorf("the refusal does not say how the user-wide workspace is synced: %v", err)
	}
	if !slices.ContainsFunc(rep.Targets, func(tr materialize.TargetReport) bool { return tr.Dir == shared && tr.Refused && len(tr.Errors) == 1 }) {
		t.Errorf("B's report does not name the refused target: %+v", rep.Targets)
	}
	if diffs, err := b.Verify(context.Background()); err != nil || !slices.ContainsFunc(diffs, func(d materialize.Difference) bool {
		return d.Kind == materialize.Unsynced && strings.Contains(d.Path, wsA)
	}) {
		t.Errorf("B's verify does not name the target A keeps: %+v %v", diffs, err)
	}
	st, err := b.Status(context.Background(), StatusOptions{})
	if err != nil || !strings.Contains(strings.Join(st.Attention, "\n"), "is kept by the workspace "+wsA) {
		t.Errorf("B's status does not say who keeps its target: %v %q", err, st.Attention)
	}
	if skilltest.Exists(filepath.Join(shared, "beta")) || !skilltest.Exists(filepath.Join(shared, "alpha", "SKILL.md")) {
		t.Error("B's refused sync changed A's target")
	}
	if !skilltest.Exists(filepath.Join(wsB, "own", "beta", "SKILL.md")) {
		t.Error("B's own target was not synced")
	}
	if r := mustSync(t, a, SyncOptions{}); len(r.Warnings) != 0 || !skilltest.Exists(filepath.Join(shared, "alpha", "SKILL.md")) {
		t.Errorf("A's sync after B's: warnings %q", r.Warnings)
	}

	// A is gone: B keeps the target now, and A's copies go as any skill
	// no longer placed does.
	if err := os.RemoveAll(filepath.Join(wsA, workspace.CacheName)); err != nil {
		t.Fatal(err)
	}
	if st, err := b.Status(context.Background(), StatusOptions{}); err != nil || strings.Contains(strings.Join(st.Attention, "\n"), "is kept by the workspace") {
		t.Errorf("B's status, with A gone, still names A as the keeper: %v %q", err, st.Attention)
	}
	r := mustSync(t, b, SyncOptions{})
	if !skilltest.Exists(filepath.Join(shared, "beta", "SKILL.md")) || skilltest.Exists(filepath.Join(shared, "alpha")) {
		t.Error("B did not take the target over")
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "this workspace keeps it now") {
		t.Errorf("the take-over was not told: %q", r.Warnings)
	}
	if _, err := a.Sync(context.Background(), SyncOptions{}); !errors.Is(err, materialize.ErrTargetTaken) {
		t.Errorf("A, back, syncs into B's target: %v", err)
	}
}

// TestTargetCommittedWithItsWorkspace: a target inside the workspace,
// its record committed and the workspace cloned elsewhere, is the clone's:
// the record names the workspace by a relative path.
func TestTargetCommittedWithItsWorkspace(t *testing.T) {
	t.Parallel()
	e, ws := newWorkspace(t, "repositories: []\ntargets:\n  - dir: .claude/skills\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	mustSync(t, e, SyncOptions{})
	rec, err := materialize.LoadTargetRecord(filepath.Join(ws, ".claude", "skills"))
	if err != nil || rec.Workspace != "../.." {
		t.Fatalf("record names the workspace %q (%v), want ../..", rec.Workspace, err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if err := os.CopyFS(clone, os.DirFS(ws)); err != nil {
		t.Fatal(err)
	}
	r := mustSync(t, reload(t, filepath.Join(clone, "skillsync.yaml")), SyncOptions{})
	if len(r.Warnings) != 0 {
		t.Errorf("the clone's sync warns: %q", r.Warnings)
	}
}

// TestDroppedTargetIsGivenUp: a target taken out of the config is
// emptied at the next sync (an edited copy moved aside, a folder of the
// user's left), its record removed, so no stale copy stays where an
// agent reads and another workspace may keep the folder.
func TestDroppedTargetIsGivenUp(t *testing.T) {
	t.Parallel()
	e, ws := newWorkspace(t, "repositories: []\ntargets:\n  - dir: kept\n  - dir: dropped\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "beta", "SKILL.md"), "---\nname: beta\ndescription: B skill.\n---\n")
	mustSync(t, e, SyncOptions{})
	dropped := filepath.Join(ws, "dropped")
	skilltest.WriteFile(t, filepath.Join(dropped, "beta", "SKILL.md"), "---\nname: beta\ndescription: B skill, edited.\n---\n")
	skilltest.WriteFile(t, filepath.Join(dropped, "users-own", "SKILL.md"), "---\nname: users-own\ndescription: Not skillsync's.\n---\n")

	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\ntargets:\n  - dir: kept\n")
	e = reload(t, filepath.Join(ws, "skillsync.yaml"))
	r := mustSync(t, e, SyncOptions{})
	if skilltest.Exists(filepath.Join(dropped, "alpha")) || skilltest.Exists(filepath.Join(dropped, "beta")) || skilltest.Exists(filepath.Join(dropped, materialize.RecordName)) {
		t.Error("the dropped target still holds skillsync's copies or record")
	}
	if !skilltest.Exists(filepath.Join(dropped, "users-own", "SKILL.md")) || !skilltest.Exists(filepath.Join(ws, "kept", "alpha", "SKILL.md")) {
		t.Error("the user's folder or the kept target was touched")
	}
	aside, _ := filepath.Glob(filepath.Join(dropped, materialize.ConflictsName, "beta*", "SKILL.md"))
	if len(aside) != 1 || !strings.Contains(strings.Join(r.Warnings, "\n"), "was edited") {
		t.Errorf("the edited copy: set aside as %v, warnings %q", aside, r.Warnings)
	}
	// Given up once: the next sync has nothing to do there, and another
	// workspace may keep the folder.
	if r := mustSync(t, e, SyncOptions{}); len(r.Warnings) != 0 || len(r.Targets) != 1 {
		t.Errorf("the sync after: warnings %q, targets %+v", r.Warnings, r.Targets)
	}
	other, otherWS := newWorkspace(t, "repositories: []\ntargets:\n  - dir: "+dropped+"\n")
	skilltest.WriteFile(t, filepath.Join(otherWS, "skills", "gamma", "SKILL.md"), "---\nname: gamma\ndescription: G skill.\n---\n")
	mustSync(t, other, SyncOptions{})
	if !skilltest.Exists(filepath.Join(dropped, "gamma", "SKILL.md")) {
		t.Error("another workspace could not keep the given-up folder")
	}
}

// TestOneWorkspaceByTwoPaths: a workspace synced once through a link to
// its folder and once through its real path keeps its target, named by
// two paths, and is not refused a target reached through a link.
func TestOneWorkspaceByTwoPaths(t *testing.T) {
	t.Parallel()
	_, ws := newWorkspace(t, "repositories: []\ntargets:\n  - dir: .claude/skills\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	for i, root := range []string{link, ws, link} {
		r := mustSync(t, reload(t, filepath.Join(root, "skillsync.yaml")), SyncOptions{})
		if !skilltest.Exists(filepath.Join(ws, ".claude", "skills", "alpha", "SKILL.md")) || len(r.Warnings) != 0 {
			t.Fatalf("sync %d, through %s: the copy is gone, or warnings %q", i, root, r.Warnings)
		}
	}
}

// TestSharedTargetThroughALink: two workspaces naming one folder, one of
// them through a link, are still two: the second is refused.
func TestSharedTargetThroughALink(t *testing.T) {
	t.Parallel()
	real := filepath.Join(t.TempDir(), "d1", "d2", "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "lt")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	a, _ := newWorkspace(t, "repositories: []\ntargets:\n  - dir: "+filepath.Join(link, "skills")+"\n")
	b, _ := newWorkspace(t, "repositories: []\ntargets:\n  - dir: "+filepath.Join(real, "skills")+"\n")
	mustSync(t, a, SyncOptions{})
	if _, err := b.Sync(context.Background(), SyncOptions{}); !errors.Is(err, materialize.ErrTargetTaken) {
		t.Errorf("the second workspace, by the real path: %v, want ErrTargetTaken", err)
	}
}

// TestTargetListedBeforePlaced: a sync that fails after placing one
// target has listed it already, so that it is given up once the config
// drops it.
func TestTargetListedBeforePlaced(t *testing.T) {
	t.Parallel()
	shared := filepath.Join(t.TempDir(), "shared")
	_, ws := newWorkspace(t, "repositories: []\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	skilltest.WriteFile(t, filepath.Join(ws, "blocked"), "a file where a target folder should be\n")
	path := filepath.Join(ws, "skillsync.yaml")
	skilltest.WriteFile(t, path, "repositories: []\ntargets:\n  - dir: "+shared+"\n  - dir: blocked/skills\n")
	if _, err := reload(t, path).Sync(context.Background(), SyncOptions{}); err == nil || !skilltest.Exists(filepath.Join(shared, "alpha", "SKILL.md")) {
		t.Fatalf("the sync with a blocked target: %v, or the first target not placed", err)
	}
	skilltest.WriteFile(t, path, "repositories: []\n")
	mustSync(t, reload(t, path), SyncOptions{})
	if skilltest.Exists(filepath.Join(shared, "alpha")) || skilltest.Exists(filepath.Join(shared, materialize.RecordName)) {
		t.Error("the target placed by the failed sync was not given up")
	}
}

// TestTwoWorkspacesRaceForOneTarget: two workspaces syncing into one new
// folder at once: one keeps it, the other is refused, and the folder
// holds the keeper's skills alone.
func TestTwoWorkspacesRaceForOneTarget(t *testing.T) {
	t.Parallel()
	for round := range 5 {
		shared := filepath.Join(t.TempDir(), "shared")
		config := "repositories: []\ntargets:\n  - dir: " + shared + "\n"
		engines, names := make([]*Engine, 2), []string{"left", "right"}
		for i := range engines {
			var ws string
			engines[i], ws = newWorkspace(t, config)
			skilltest.WriteFile(t, filepath.Join(ws, "skills", names[i], "SKILL.md"), "---\nname: "+names[i]+"\ndescription: A skill.\n---\n")
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range engines {
			wg.Go(func() { _, errs[i] = engines[i].Sync(context.Background(), SyncOptions{}) })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: errors %v and %v, want one refused", round, errs[0], errs[1])
		}
		keeper, other := 0, 1
		if errs[0] != nil {
			keeper, other = 1, 0
		}
		if !errors.Is(errs[other], materialize.ErrTargetTaken) {
			t.Errorf("round %d: %v, want ErrTargetTaken", round, errs[other])
		}
		rec, err := materialize.LoadTargetRecord(shared)
		if err != nil || len(rec.Skills) != 1 || rec.Skills[names[keeper]] == nil || skilltest.Exists(filepath.Join(shared, names[other])) {
			t.Errorf("round %d: the folder holds %v (record %+v, %v), want %s's skill alone", round, rec.Skills, rec, err, names[keeper])
		}
	}
}

// TestTargetsOutsideTheirConfig: what a sync run without the real config
// sees must not give up the targets the real config names: the built-in
// default (no skillsync.yaml: a stash, a checkout), and another home
// directory (sudo, a service), where ~ leads elsewhere. And a sync with
// nothing to do leaves a committed target as it was: its lock file holds
// no record.
func TestTargetsOutsideTheirConfig(t *testing.T) {
	t.Parallel()
	ws, home, other := t.TempDir(), t.TempDir(), t.TempDir()
	path := filepath.Join(ws, "skillsync.yaml")
	skilltest.WriteFile(t, path, "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n  - dir: ~/.agent/skills\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	mustSync(t, homeEngine(t, ws, "skillsync.yaml", home), SyncOptions{})
	inWorkspace, inHome := filepath.Join(ws, ".claude", "skills"), filepath.Join(home, ".agent", "skills")
	entries, _ := os.ReadDir(inWorkspace)
	for _, en := range entries {
		if name := en.Name(); name != "alpha" && name != "skillsync" && name != "writing-skills" && name != materialize.RecordName {
			if data, _ := os.ReadFile(filepath.Join(inWorkspace, name)); runtime.GOOS != "windows" || len(data) != 0 {
				t.Errorf("the target holds %s (%q), which a committed target would see come or change", name, data)
			}
		}
	}
	for _, e := range []*Engine{homeEngine(t, ws, "skillsync.yaml", other), homeEngine(t, ws, "", home)} {
		if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil && !errors.Is(err, ErrPartial) {
			t.Fatal(err)
		}
		for _, dir := range []string{inWorkspace, inHome} {
			if !skilltest.Exists(filepath.Join(dir, "alpha", "SKILL.md")) {
				t.Errorf("%s lost its copy", dir)
			}
		}
	}
}

// TestCopiedTargetIsTakenOver: a target folder copied with its record
// names a workspace that does not keep the copy (its list of targets does
// not name it): another workspace keeping the copy takes it over, with a
// warning, rather than be refused for good.
func TestCopiedTargetIsTakenOver(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	original, copied := filepath.Join(root, "claude"), filepath.Join(root, "codex")
	a, _ := newWorkspace(t, "repositories: []\ntargets:\n  - dir: "+original+"\n")
	b, wsB := newWorkspace(t, "repositories: []\ntargets:\n  - dir: "+copied+"\n")
	skilltest.WriteFile(t, filepath.Join(wsB, "skills", "beta", "SKILL.md"), "---\nname: beta\ndescription: B.\n---\n")
	mustSync(t, a, SyncOptions{})
	if err := os.CopyFS(copied, os.DirFS(original)); err != nil {
		t.Fatal(err)
	}
	r := mustSync(t, b, SyncOptions{})
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "does not list it") || !skilltest.Exists(filepath.Join(copied, "beta", "SKILL.md")) {
		t.Errorf("the copy was not taken over: warnings %q", r.Warnings)
	}
	if r := mustSync(t, a, SyncOptions{}); len(r.Warnings) != 0 {
		t.Errorf("the original's workspace after: %q", r.Warnings)
	}
}

// TestListsOfOtherHomesAndConfigs: a workspace's list names a folder
// below its home as ~/..., which another sync, run with another HOME,
// must still read as that workspace's (refused, not taken over); and a
// second config of one workspace (--config ci.yaml) gives up nothing the
// first keeps.
func TestListsOfOtherHomesAndConfigs(t *testing.T) {
	t.Parallel()
	homeA, homeB := t.TempDir(), t.TempDir()
	_, wsA := newWorkspace(t, "repositories: []\ntargets:\n  - dir: ~/.claude/skills\n")
	_, wsB := newWorkspace(t, "repositories: []\ntargets:\n  - dir: "+filepath.Join(homeA, ".claude", "skills")+"\n")
	skilltest.WriteFile(t, filepath.Join(wsA, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A.\n---\n")
	mustSync(t, homeEngine(t, wsA, "skillsync.yaml", homeA), SyncOptions{})
	if _, err := homeEngine(t, wsB, "skillsync.yaml", homeB).Sync(context.Background(), SyncOptions{}); !errors.Is(err, materialize.ErrTargetTaken) {
		t.Errorf("a sync with another HOME into A's ~ target: %v, want ErrTargetTaken", err)
	}
	if !skilltest.Exists(filepath.Join(homeA, ".claude", "skills", "alpha", "SKILL.md")) {
		t.Error("A's copy is gone")
	}

	skilltest.WriteFile(t, filepath.Join(wsA, "ci.yaml"), "repositories: []\ntargets:\n  - dir: .codex/skills\n")
	mustSync(t, homeEngine(t, wsA, "ci.yaml", homeA), SyncOptions{})
	mustSync(t, homeEngine(t, wsA, "skillsync.yaml", homeA), SyncOptions{})
	for _, dir := range []string{filepath.Join(homeA, ".claude", "skills"), filepath.Join(wsA, ".codex", "skills")} {
		if !skilltest.Exists(filepath.Join(dir, "alpha", "SKILL.md")) {
			t.Errorf("%s was given up by a sync on the other config", dir)
		}
	}
}

// homeEngine is an engine over the config file in ws (the built-in
// default for ""), with home as the home directory.
func homeEngine(t *testing.T, ws, file, home string) *Engine {
	t.Helper()
	env := hostenv.New(ws, []string{"HOME=" + home, "USERPROFILE=" + home})
	cfg, err := config.DefaultIn(env, Kinds())
	if file != "" {
		cfg, err = config.LoadIn(env, filepath.Join(ws, file), Kinds())
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg.Global = ""
	return NewEngine(cfg, WithHost(ws, env.Environ()), WithGitStore(filepath.Join(ws, ".git-store")))
}
