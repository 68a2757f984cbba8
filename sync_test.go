package skillsync

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/workspace"
)

// newWorkspace writes the config text into a new workspace and returns an engine over
// it whose git stores live in the test's temporary directory.
func newWorkspace(t *testing.T, text string) (*Engine, string) {
	t.Helper()
	_, ws := workspaceConfig(t, text)
	return reload(t, filepath.Join(ws, config.FileName)), ws
}

// reload returns a new engine over the config at path, as newWorkspace
// makes it.
func reload(t *testing.T, path string) *Engine {
	t.Helper()
	return NewEngine(loadConfig(t, path), WithGitStore(filepath.Join(filepath.Dir(path), ".git-store")))
}

// workspaceConfig writes text as the config of a new workspace and loads
// it as loadConfig does. It returns the config and the workspace.
func workspaceConfig(t *testing.T, text string, embedded ...string) (*config.Config, string) {
	t.Helper()
	ws := t.TempDir()
	path := filepath.Join(ws, config.FileName)
	skilltest.WriteFile(t, path, text)
	return loadConfig(t, path, embedded...), ws
}

// loadConfig loads the config at path with the global layer off, so that
// the skills of the machine running the tests stay out of them; embedded
// are the file systems the test lends WithEmbedded besides builtin.
func loadConfig(t *testing.T, path string, embedded ...string) *config.Config {
	t.Helper()
	cfg, err := config.Load(path, Kinds(embedded...))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Global = ""
	return cfg
}

func mustSync(t *testing.T, e *Engine, opts SyncOptions) *SyncReport {
	t.Helper()
	r, err := e.Sync(context.Background(), opts)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return r
}

func TestSyncBuiltinDefault(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	env := []string{"HOME=" + t.TempDir()}
	cfg, err := config.DefaultIn(hostenv.New(ws, env), Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workspace != ws {
		t.Fatalf("the default workspace is %s, want the working directory %s", cfg.Workspace, ws)
	}
	e := NewEngine(cfg, WithHost(ws, env))
	r := mustSync(t, e, SyncOptions{})
	if len(r.Skills.Added) < 2 || r.Files.Written < 2 || r.Sources[0].Status != StatusUpdated {
		t.Errorf("first sync: %+v", r)
	}
	if !skilltest.Exists(filepath.Join(ws, ".skills-cache", "builtin", "skillsync", "SKILL.md")) || !skilltest.Exists(filepath.Join(ws, workspace.LockName)) {
		t.Error("the built-in skills or the lock were not written")
	}
	r = mustSync(t, e, SyncOptions{})
	if r.Files.Written != 0 || len(r.Changes) != 0 || r.Sources[0].Status != StatusUnchanged || r.Files.Unchanged < 2 {
		t.Errorf("a sync with nothing new: %+v", r)
	}
	cat, err := e.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w, _ := cat.Lookup("skillsync")
	if w.Location() != filepath.Join(ws, ".skills-cache", "builtin", "skillsync", "SKILL.md") {
		t.Errorf("location = %s, want the cache", w.Location())
	}
}

func TestSyncFailedSourceKeepsLastGood(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/team-one", "From git.")
	head := up.Commit("one")
	e, ws := newWorkspace(t, "repositories:\n  - embedded: builtin\n  - name: team\n    git: "+up.URL()+"\n")
	mustSync(t, e, SyncOptions{})
	cached := filepath.Join(ws, ".skills-cache", "team", "team-one", "SKILL.md")
	if !skilltest.Exists(cached) {
		t.Fatal("the git skill was not materialized")
	}
	if err := os.RemoveAll(up.Dir); err != nil {
		t.Fatal(err)
	}
	r, err := e.Sync(context.Background(), SyncOptions{})
	if !errors.Is(err, ErrPartial) {
		t.Errorf("sync with one failed source of two = %v, want ErrPartial", err)
	}
	if r.Failed() != 1 || r.Sources[1].Status != StatusFailed || r.Sources[1].Revision != head || r.Sources[1].Error == "" {
		t.Errorf("sources = %+v", r.Sources)
	}
	if !skilltest.Exists(cached) || len(r.Skills.Removed) != 0 {
		t.Errorf("a failed source lost its files: removed %v", r.Skills.Removed)
	}
	locked := readLock(t, ws)
	if locked.Sources["team"] == nil || locked.Sources["team"].Revision != head {
		t.Errorf("the lock lost the failed source: %+v", locked.Sources["team"])
	}
}

func TestSyncFrozen(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pinned", "Pinned.")
	first := up.Commit("one")
	local := t.TempDir()
	skilltest.Skill(t, local, "loc", "Local.", nil)
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n  - name: local\n    dir: " + local + "\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})

	// Upstream moves; a frozen sync stays at the locked commit.
	up.Skill("skills/later", "Later.")
	up.Commit("two")
	r := mustSync(t, e, SyncOptions{Frozen: true})
	if r.Sources[0].Revision != first || skilltest.Exists(filepath.Join(ws, ".skills-cache", "team", "later")) {
		t.Errorf("frozen sync moved to %s", r.Sources[0].Revision)
	}

	// Content that no longer hashes as locked.
	skilltest.Skill(t, local, "loc", "Changed behind the lock's back.", nil)
	_, err := e.Sync(context.Background(), SyncOptions{Frozen: true})
	var fe *FrozenError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "~ skill local/loc: lock has") {
		t.Fatalf("frozen with changed content = %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(ws, ".skills-cache", "local", "loc", "SKILL.md"))
	if !strings.Contains(string(data), "description: Local.") {
		t.Error("a refused skill was written anyway")
	}

	// The config disagrees with the lock.
	if err := os.WriteFile(filepath.Join(ws, config.FileName), []byte(text+"  - name: extra\n    embedded: builtin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = reload(t, filepath.Join(ws, config.FileName)).Sync(context.Background(), SyncOptions{Frozen: true})
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "+ source extra (embedded builtin) is in the config, not in the lock") {
		t.Errorf("frozen with a new source = %v", err)
	}
}

// TestSyncFrozenWithoutALock: with no lock to move, the frozen sync's
// error says to sync once without --frozen, not to update the lock.
func TestSyncFrozenWithoutALock(t *testing.T) {
	t.Parallel()
	local := t.TempDir()
	skilltest.Skill(t, local, "loc", "Local.", nil)
	e, _ := newWorkspace(t, "repositories:\n  - name: local\n    dir: "+local+"\n")
	_, err := e.Sync(context.Background(), SyncOptions{Frozen: true})
	if !IsFrozen(err) || !strings.Contains(err.Error(), "skillsync.lock\nrun skillsync sync once without --frozen") {
		t.Fatalf("frozen without a lock = %v", err)
	}
	if strings.Contains(err.Error(), "update") {
		t.Errorf("frozen without a lock tells to update a lock there is not: %v", err)
	}
}

func TestUpdateMovesOnlyTheNamedSource(t *testing.T) {
	t.Parallel()
	a, b := gittest.NewRepo(t, "main"), gittest.NewRepo(t, "main")
	a.Skill("skills/from-a", "A.")
	a.Commit("a1")
	b.Skill("skills/from-b", "B.")
	b1 := b.Commit("b1")
	e, ws := newWorkspace(t, "repositories:\n  - name: a\n    git: "+a.URL()+"\n  - name: b\n    git: "+b.URL()+"\n")
	mustSync(t, e, SyncOptions{})
	a2 := a.Commit("a2")
	b.Commit("b2")
	r := mustSync(t, e, SyncOptions{Locked: true, Move: []string{"a"}})
	if r.Sources[0].Revision != a2 || r.Sources[1].Revision != b1 {
		t.Errorf("update a: %+v", r.Sources)
	}
	locked := readLock(t, ws)
	if locked.Sources["a"].Revision != a2 || locked.Sources["b"].Revision != b1 {
		t.Errorf("lock after update a: a %s b %s", locked.Sources["a"].Revision, locked.Sources["b"].Revision)
	}
	if _, err := e.Sync(context.Background(), SyncOptions{Locked: true, Move: []string{"nope"}}); err == nil {
		t.Error("update of an unknown source succeeded")
	}
}

func TestSyncLockContention(t *testing.T) {
	t.Parallel()
	e, ws := newWorkspace(t, "repositories:\n  - embedded: builtin\n")
	if err := os.MkdirAll(filepath.Join(ws, workspace.CacheName), 0o755); err != nil {
		t.Fatal(err)
	}
	held, err := flock.Acquire(context.Background(), filepath.Join(ws, workspace.CacheName, ".lock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = e.Sync(context.Background(), SyncOptions{Wait: 100 * time.Millisecond})
	var he *flock.HeldError
	if !errors.As(err, &he) || he.PID != os.Getpid() {
		t.Errorf("sync beside a held lock = %v", err)
	}
}

func TestSyncHostileGitTree(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	skillMD := func(name string) string {
		return up.Blob("---\nname: " + name + "\ndescription: Hostile.\n---\n")
	}
	evil := up.Blob("escaped")
	inner := up.MkTree("100644 blob "+skillMD("evil")+"\tSKILL.md", "100644 blob "+evil+"\t..")
	upper := up.MkTree("100644 blob " + skillMD("PDF") + "\tSKILL.md")
	lower := up.MkTree("100644 blob " + skillMD("pdf") + "\tSKILL.md")
	skills := up.MkTree("040000 tree "+inner+"\tevil", "040000 tree "+upper+"\tPDF", "040000 tree "+lower+"\tpdf")
	up.CommitTree("main", "hostile", "040000 tree "+skills+"\tskills", "100644 blob "+evil+"\t..")
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	r := mustSync(t, e, SyncOptions{})
	if r.Failed() != 0 {
		t.Fatalf("sync: %+v", r.Sources)
	}
	cache := filepath.Join(ws, workspace.CacheName, "team")
	entries, _ := os.ReadDir(cache)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	// PDF and pdf differ only by case: one directory, the first by path.
	if !slices.Equal(names, []string{"PDF", "evil"}) {
		t.Errorf("cache holds %v", names)
	}
	if skilltest.Exists(filepath.Join(ws, workspace.CacheName, "escaped")) || skilltest.Exists(filepath.Join(ws, "escaped")) {
		t.Error("a file escaped the cache")
	}
	files, _ := os.ReadDir(filepath.Join(cache, "evil"))
	if len(files) != 1 || files[0].Name() != "SKILL.md" {
		t.Errorf("evil holds %v", files)
	}
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}

func TestSyncTargetsAllLayers(t *testing.T) {
	t.Parallel()
	e, ws := newWorkspace(t, "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n  - dir: linked\n    mode: symlink\n")
	for _, d := range []string{"skills/mine", ".claude/skills/users-own"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "skills/mine/SKILL.md"), []byte("---\nname: mine\ndescription: Workspace skill.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".claude/skills/users-own/SKILL.md"), []byte("---\nname: users-own\ndescription: Not skillsync's.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustSync(t, e, SyncOptions{})
	if len(r.Targets) != 2 {
		t.Fatalf("targets = %+v", r.Targets)
	}
	for _, name := range []string{"mine", "skillsync", "writing-skills"} {
		if !skilltest.Exists(filepath.Join(ws, ".claude/skills", name, "SKILL.md")) {
			t.Errorf("copy target lacks %s", name)
		}
	}
	if link, err := os.Readlink(filepath.Join(ws, "linked", "skillsync")); err != nil || link != filepath.Join(ws, workspace.CacheName, "builtin", "skillsync") {
		t.Errorf("symlink target: %q %v", link, err)
	}
	if link, _ := os.Readlink(filepath.Join(ws, "linked", "mine")); link != filepath.Join(ws, "skills", "mine") {
		t.Errorf("a workspace winner links to %q", link)
	}
	// The workspace skill goes away: it leaves the targets; the user's stays.
	if err := os.RemoveAll(filepath.Join(ws, "skills/mine")); err != nil {
		t.Fatal(err)
	}
	r = mustSync(t, e, SyncOptions{})
	if skilltest.Exists(filepath.Join(ws, ".claude/skills/mine")) || skilltest.Exists(filepath.Join(ws, "linked/mine")) {
		t.Error("a winner that disappeared is still in a target")
	}
	if !skilltest.Exists(filepath.Join(ws, ".claude/skills/users-own/SKILL.md")) {
		t.Error("the user's own skill in the target was removed")
	}
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}

func readLock(t *testing.T, ws string) *lock.File {
	t.Helper()
	l, _, err := lock.Read(filepath.Join(ws, workspace.LockName), Kinds())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLockIsPortable: a dir source is locked by its path relative to the
// config, so the workspace copied elsewhere (another checkout, another
// host) syncs --frozen against the same lock.
func TestLockIsPortable(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "a", "ws")
	skilltest.Skill(t, filepath.Join(ws, "team"), "notes", "The notes skill.", nil)
	skilltest.WriteFile(t, filepath.Join(ws, config.FileName), "repositories:\n  - name: team\n    dir: team\n")
	mustSync(t, reload(t, filepath.Join(ws, config.FileName)), SyncOptions{})
	if got := readLock(t, ws).Sources["team"].URL; got != "team" {
		t.Fatalf("the lock records the dir source as %q, want the relative path team", got)
	}
	moved := filepath.Join(root, "b", "elsewhere")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ws, moved); err != nil {
		t.Fatal(err)
	}
	if _, err := reload(t, filepath.Join(moved, config.FileName)).Sync(context.Background(), SyncOptions{Frozen: true}); err != nil {
		t.Errorf("sync --frozen of the moved workspace: %v", err)
	}
}

// TestSyncNewSourceIsUpdated: a source's first sync says updated, even
// when it yields no skill to add; the next says unchanged.
func TestSyncNewSourceIsUpdated(t *testing.T) {
	t.Parallel()
	cfg, ws := workspaceConfig(t, "repositories:\n  - name: team\n    dir: team\ntargets: []\n")
	if err := os.Mkdir(filepath.Join(ws, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(cfg, WithHost(ws, os.Environ()))
	r := mustSync(t, e, SyncOptions{})
	if len(r.Sources) != 1 || r.Sources[0].Status != StatusUpdated {
		t.Errorf("first sync: %+v", r.Sources)
	}
	r = mustSync(t, e, SyncOptions{})
	if len(r.Sources) != 1 || r.Sources[0].Status != StatusUnchanged {
		t.Errorf("second sync: %+v", r.Sources)
	}
}
