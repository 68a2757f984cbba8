package skillsync

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func curateWorkspace(t *testing.T) (*Engine, *clock, string) {
	t.Helper()
	cfg, ws := workspaceConfig(t, "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "The notes skill.", nil)
	skilltest.Skill(t, filepath.Join(ws, "skills"), "kept", "The kept skill.", nil)
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := NewEngine(cfg, WithClock(c.now), WithWarnings(func(w string) { t.Log(w) }))
	mustSync(t, e, SyncOptions{})
	return e, c, ws
}

// state returns the curation state of the copy key names
// ("workspace/notes", "marketplace:builtin/skillsync").
func state(t *testing.T, e *Engine, key string) curator.State {
	t.Helper()
	u, err := e.Usage().Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := curator.ParseCopy(key)
	if err != nil {
		t.Fatal(err)
	}
	return u.StateOf(c)
}

func TestCurateArchiveAndRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, c, ws := curateWorkspace(t)
	if _, err := e.Pin(ctx, "kept", true); err != nil {
		t.Fatal(err)
	}

	// 45 days on: everything unpinned is stale; a dry run changes nothing.
	c.t = c.t.Add(45 * 24 * time.Hour)
	plan, err := e.Curate(ctx, CurateOptions{DryRun: true})
	if err != nil || len(plan.Changes) != 3 || state(t, e, "workspace/notes") != curator.Active {
		t.Fatalf("dry run: %+v %v, notes %s", plan, err, state(t, e, "workspace/notes"))
	}
	if plan, _ = e.Curate(ctx, CurateOptions{}); len(plan.Changes) != 3 || state(t, e, "workspace/notes") != curator.Stale || state(t, e, "workspace/kept") != curator.Active {
		t.Fatalf("45 days: %+v", plan)
	}
	cat, _ := e.Catalog(ctx)
	if w, _ := cat.Lookup("notes"); w.State != string(curator.Stale) || len(cat.Visible()) != 4 {
		t.Errorf("a stale skill must stay visible, marked: %+v", w)
	}

	// Used again: active at once, without waiting for a curation.
	c.t = c.t.Add(time.Hour)
	if _, err := e.Use(ctx, "skillsync", false); err != nil {
		t.Fatal(err)
	}
	if state(t, e, "marketplace:builtin/skillsync") != curator.Active {
		t.Error("a use of a stale skill did not make it active")
	}
	c.t = c.t.Add(3 * time.Hour)
	if plan, _ = e.Curate(ctx, CurateOptions{}); len(plan.Changes) != 0 || plan.Skills[0].LastSource != curator.FromCLI {
		t.Fatalf("curation after the use: %+v", plan)
	}

	// 120 days after the start: archived. The local one moves, the
	// marketplace one leaves the cache and the target.
	c.t = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(120 * 24 * time.Hour)
	// skillsync, used on day 46, is only stale by now.
	if plan, _ = e.Curate(ctx, CurateOptions{}); len(plan.Changes) != 3 || state(t, e, "marketplace:builtin/skillsync") != curator.Stale {
		t.Fatalf("120 days: %+v", plan)
	}
	if skilltest.Exists(filepath.Join(ws, "skills", "notes")) {
		t.Error("an archived local skill was not moved")
	}
	copies := e.ArchivedCopies()
	if len(copies) != 1 || copies[0].Name != "notes" || !strings.HasSuffix(copies[0].Dir, "notes-20260501T000000Z") {
		t.Errorf("archived copies = %+v", copies)
	}
	for _, p := range []string{".skills-cache/builtin/writing-skills", ".claude/skills/writing-skills", ".claude/skills/notes"} {
		if skilltest.Exists(filepath.Join(ws, p)) {
			t.Errorf("%s is still there after archiving", p)
		}
	}
	if !skilltest.Exists(filepath.Join(ws, ".skills-cache/builtin/skillsync")) || !skilltest.Exists(filepath.Join(ws, ".claude/skills/kept")) {
		t.Error("a used or pinned skill was archived")
	}
	// A sync does not bring the archived marketplace skill back.
	mustSync(t, e, SyncOptions{})
	if skilltest.Exists(filepath.Join(ws, ".skills-cache/builtin/writing-skills")) {
		t.Error("sync materialized an archived skill")
	}

	// Restore both.
	if _, err := e.Restore(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if !skilltest.Exists(filepath.Join(ws, "skills", "notes", "SKILL.md")) || state(t, e, "workspace/notes") != curator.Active {
		t.Error("restore did not move the local skill back")
	}
	if _, err := e.Restore(ctx, "writing-skills"); err != nil {
		t.Fatal(err)
	}
	if !skilltest.Exists(filepath.Join(ws, ".skills-cache/builtin/writing-skills/SKILL.md")) || !skilltest.Exists(filepath.Join(ws, ".claude/skills/writing-skills/SKILL.md")) {
		t.Error("restore did not materialize the marketplace skill again")
	}
	events, _, _ := e.Audit().Read(time.Time{}, "")
	ops := map[string]int{}
	for _, ev := range events {
		ops[ev.Op]++
	}
	for op, n := range map[string]int{"pinned": 1, "stale": 3, "reactivated": 1, "archived": 2, "restored": 2, "added": 2, "removed": 1} {
		if ops[op] < n {
			t.Errorf("audit has %d %s events, want at least %d (%v)", ops[op], op, n, ops)
		}
	}
}

func TestRestoreRefusesOverAnExistingSkill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, c, ws := curateWorkspace(t)
	c.t = c.t.Add(100 * 24 * time.Hour)
	if _, err := e.Curate(ctx, CurateOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "The notes skill.", nil)
	_, err := e.Restore(ctx, "notes")
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("restore over an existing skill = %v", err)
	}
	if len(e.ArchivedCopies()) == 0 {
		t.Error("the refused restore lost the archived copy")
	}
}

func TestFirstSeenIsSetBySync(t *testing.T) {
	t.Parallel()
	e, c, _ := curateWorkspace(t)
	u, _ := e.Usage().Load()
	for _, key := range []string{"marketplace:builtin/skillsync", "marketplace:builtin/writing-skills"} {
		cp, _ := curator.ParseCopy(key)
		if s := u.Skills[cp]; s == nil || s.FirstSeenAt == nil || !s.FirstSeenAt.Equal(c.t) {
			t.Errorf("%s first seen = %+v", key, s)
		}
	}
}

// localWorkspace is a workspace with only local skills, user alice, and a
// clock; write skills into it before calling the returned engine.
func localWorkspace(t *testing.T) (*Engine, *clock, string) {
	t.Helper()
	cfg, ws := workspaceConfig(t, "repositories: []\nuser: alice\n")
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return NewEngine(cfg, WithClock(c.now), WithWarnings(func(w string) { t.Log(w) })), c, ws
}

// TestCurateNestedSkillArchivesToTheLayerArchive: a skill deep in the
// workspace layer archives to skills/.archive/, and restore brings it back.
func TestCurateNestedSkillArchivesToTheLayerArchive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, c, ws := localWorkspace(t)
	skilltest.Skill(t, filepath.Join(ws, "skills", "team"), "deep", "The deep skill.", nil)
	skilltest.Skill(t, filepath.Join(ws, "skills"), "other", "The other skill.", nil)
	mustSync(t, e, SyncOptions{}) // the first sighting of both
	if _, err := e.Use(ctx, "other", false); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(100 * 24 * time.Hour)
	if _, err := e.Use(ctx, "other", false); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(3 * time.Hour)
	if _, err := e.Curate(ctx, CurateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !skilltest.Exists(filepath.Join(ws, "skills", ".archive", "deep-20260411T030000Z", "SKILL.md")) || skilltest.Exists(filepath.Join(ws, "skills", "team", "deep")) {
		t.Fatal("the nested skill is not in skills/.archive")
	}
	if _, err := e.Restore(ctx, "deep"); err != nil {
		t.Fatal(err)
	}
	if w, _, err := e.Lookup(ctx, "deep"); err != nil || w.State != string(curator.Active) {
		t.Fatalf("after restore: %v %v", w, err)
	}
}

// TestCurateNeverMovesALayerRoot: a SKILL.md at the top of skills/ makes
// the layer itself a skill; archiving it would move the usage file and the
// audit log, so curation refuses and the skill stays.
func TestCurateNeverMovesALayerRoot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, c, ws := localWorkspace(t)
	skilltest.Skill(t, ws, "skills", "The skills skill.", nil)
	if _, err := e.Use(ctx, "skills", false); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(100 * 24 * time.Hour)
	var warnings []string
	e.warn = func(w string) { warnings = append(warnings, w) }
	plan, err := e.Curate(ctx, CurateOptions{})
	if err != nil || len(plan.Changes) != 0 {
		t.Fatalf("plan = %+v %v", plan, err)
	}
	if !skilltest.Exists(filepath.Join(ws, "skills", "SKILL.md")) || !skilltest.Exists(filepath.Join(ws, "skills", ".usage.json")) {
		t.Error("the layer directory moved")
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "layer directory itself") {
		t.Errorf("warnings = %q", warnings)
	}
}

// TestCurationActsOnTheCopyItMeans: archiving alice's pdf leaves the
// workspace's pdf, which now wins, active and listed.
func TestCurationActsOnTheCopyItMeans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, c, ws := localWorkspace(t)
	skilltest.Skill(t, filepath.Join(ws, "skills"), "pdf", "The pdf skill.", nil)
	skilltest.Skill(t, filepath.Join(ws, "alice", "skills"), "pdf", "The pdf skill.", nil)
	if _, err := e.Use(ctx, "pdf", false); err != nil {
		t.Fatal(err)
	}
	if state(t, e, "user:alice/pdf") != curator.Active {
		t.Fatal("the use did not count for alice's copy")
	}
	c.t = c.t.Add(100 * 24 * time.Hour)
	if plan, err := e.Curate(ctx, CurateOptions{}); err != nil || len(plan.Changes) != 1 || plan.Changes[0].Copy.String() != "user:alice/pdf" {
		t.Fatalf("plan = %+v %v", plan, err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := cat.Lookup("pdf"); !ok || w.Layer != layering.Workspace || w.State != string(curator.Active) || len(cat.Visible()) != 1 {
		t.Errorf("after archiving alice's pdf the workspace's is %+v", w)
	}
	if !skilltest.Exists(filepath.Join(ws, "alice", "skills", ".archive", "pdf-20260411T000000Z")) {
		t.Error("alice's pdf is not in her layer's archive")
	}
}

// TestUsageVersion1IsMigrated: a version-1 file's counts go to the copy
// that wins now, and the old file is kept as .usage.json.v1.
func TestUsageVersion1IsMigrated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, _, ws := localWorkspace(t)
	skilltest.Skill(t, filepath.Join(ws, "skills"), "pdf", "The pdf skill.", nil)
	skilltest.Skill(t, filepath.Join(ws, "alice", "skills"), "pdf", "The pdf skill.", nil)
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "The notes skill.", nil)
	v1 := `{"version":1,"skills":{"pdf":{"use_count":5,"view_count":1,"state":"active","pinned":true},"gone":{"use_count":2,"state":"active"}}}`
	usage := filepath.Join(ws, "skills", ".usage.json")
	if err := os.WriteFile(usage, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Use(ctx, "notes", false); err != nil {
		t.Fatal(err)
	}
	if kept, _ := os.ReadFile(usage + ".v1"); string(kept) != v1 {
		t.Errorf(".usage.json.v1 = %q", kept)
	}
	u, err := curator.NewStore(filepath.Join(ws, "skills")).Load()
	if err != nil {
		t.Fatal(err)
	}
	alice, _ := curator.ParseCopy("user:alice/pdf")
	notes, _ := curator.ParseCopy("workspace/notes")
	if u.Version != 2 || u.Skills[alice] == nil || u.Skills[alice].UseCount != 5 || !u.Skills[alice].Pinned || u.Skills[notes].UseCount != 1 {
		t.Errorf("migrated usage = %+v", u.Skills)
	}
}

// TestSyncWithABrokenUsageFile: usage is a side input; a corrupt file
// warns and sync goes on, a directory in its place is an error that names
// the path and leaves the cache as it was.
func TestSyncWithABrokenUsageFile(t *testing.T) {
	t.Parallel()
	e, _, ws := curateWorkspace(t)
	usage := filepath.Join(ws, "skills", ".usage.json")
	if err := os.WriteFile(usage, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	e.warn = func(w string) { warnings = append(warnings, w) }
	if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
		t.Fatalf("sync with a corrupt usage file: %v", err)
	}
	if len(warnings) == 0 || !strings.Contains(strings.Join(warnings, "\n"), usage) {
		t.Errorf("warnings = %q", warnings)
	}
	if err := os.Remove(usage); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(usage, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := e.Sync(context.Background(), SyncOptions{})
	if err == nil || !strings.Contains(err.Error(), usage+" is a directory") {
		t.Errorf("sync with a directory for usage: %v", err)
	}
	if !skilltest.Exists(filepath.Join(ws, ".skills-cache", "builtin", "skillsync", "SKILL.md")) {
		t.Error("the cache lost a skill")
	}
}
