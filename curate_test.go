package skillsync

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func writeLocalSkill(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	data := "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n"
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func curateWorkspace(t *testing.T) (*Engine, *clock, string) {
	t.Helper()
	ws := t.TempDir()
	text := "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n"
	if err := os.WriteFile(filepath.Join(ws, config.FileName), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	writeLocalSkill(t, filepath.Join(ws, "skills"), "notes")
	writeLocalSkill(t, filepath.Join(ws, "skills"), "kept")
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg, err := config.Load(filepath.Join(ws, config.FileName))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Global = ""
	e := NewEngine(cfg, WithClock(c.now), WithWarnings(func(w string) { t.Log(w) }))
	mustSync(t, e, SyncOptions{})
	return e, c, ws
}

func state(t *testing.T, e *Engine, name string) string {
	t.Helper()
	u, err := e.Usage().Load()
	if err != nil {
		t.Fatal(err)
	}
	return u.StateOf(name)
}

func TestCurateArchiveAndRestore(t *testing.T) {
	ctx := context.Background()
	e, c, ws := curateWorkspace(t)
	if _, err := e.Pin(ctx, "kept", true); err != nil {
		t.Fatal(err)
	}

	// 45 days on: everything unpinned is stale; a dry run changes nothing.
	c.t = c.t.Add(45 * 24 * time.Hour)
	plan, err := e.Curate(ctx, CurateOptions{DryRun: true})
	if err != nil || len(plan.Changes) != 3 || state(t, e, "notes") != curator.Active {
		t.Fatalf("dry run: %+v %v, notes %s", plan, err, state(t, e, "notes"))
	}
	if plan, _ = e.Curate(ctx, CurateOptions{}); len(plan.Changes) != 3 || state(t, e, "notes") != curator.Stale || state(t, e, "kept") != curator.Active {
		t.Fatalf("45 days: %+v", plan)
	}
	cat, _ := e.Catalog(ctx)
	if w, _ := cat.Lookup("notes"); w.State != curator.Stale || len(cat.Visible()) != 4 {
		t.Errorf("a stale skill must stay visible, marked: %+v", w)
	}

	// Used again: active.
	c.t = c.t.Add(time.Hour)
	if _, err := e.Use(ctx, "skillsync", false); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(3 * time.Hour)
	if plan, _ = e.Curate(ctx, CurateOptions{}); len(plan.Changes) != 1 || plan.Changes[0].Name != "skillsync" || plan.Changes[0].To != curator.Active {
		t.Fatalf("reactivation: %+v", plan)
	}

	// 120 days after the start: archived. The local one moves, the
	// marketplace one leaves the cache and the target.
	c.t = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(120 * 24 * time.Hour)
	// skillsync, used on day 46, is only stale by now.
	if plan, _ = e.Curate(ctx, CurateOptions{}); len(plan.Changes) != 3 || state(t, e, "skillsync") != curator.Stale {
		t.Fatalf("120 days: %+v", plan)
	}
	if exists(filepath.Join(ws, "skills", "notes")) {
		t.Error("an archived local skill was not moved")
	}
	copies := e.ArchivedCopies()
	if len(copies) != 1 || copies[0].Name != "notes" || !strings.HasSuffix(copies[0].Dir, "notes-20260501T000000Z") {
		t.Errorf("archived copies = %+v", copies)
	}
	for _, p := range []string{".skills-cache/builtin/writing-skills", ".claude/skills/writing-skills", ".claude/skills/notes"} {
		if exists(filepath.Join(ws, p)) {
			t.Errorf("%s is still there after archiving", p)
		}
	}
	if !exists(filepath.Join(ws, ".skills-cache/builtin/skillsync")) || !exists(filepath.Join(ws, ".claude/skills/kept")) {
		t.Error("a used or pinned skill was archived")
	}
	// A sync does not bring the archived marketplace skill back.
	mustSync(t, e, SyncOptions{})
	if exists(filepath.Join(ws, ".skills-cache/builtin/writing-skills")) {
		t.Error("sync materialized an archived skill")
	}

	// Restore both.
	if _, err := e.Restore(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(ws, "skills", "notes", "SKILL.md")) || state(t, e, "notes") != curator.Active {
		t.Error("restore did not move the local skill back")
	}
	if _, err := e.Restore(ctx, "writing-skills"); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(ws, ".skills-cache/builtin/writing-skills/SKILL.md")) || !exists(filepath.Join(ws, ".claude/skills/writing-skills/SKILL.md")) {
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
	ctx := context.Background()
	e, c, ws := curateWorkspace(t)
	c.t = c.t.Add(100 * 24 * time.Hour)
	if _, err := e.Curate(ctx, CurateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeLocalSkill(t, filepath.Join(ws, "skills"), "notes")
	_, err := e.Restore(ctx, "notes")
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("restore over an existing skill = %v", err)
	}
	if len(e.ArchivedCopies()) == 0 {
		t.Error("the refused restore lost the archived copy")
	}
}

func TestFirstSeenIsSetBySync(t *testing.T) {
	e, c, _ := curateWorkspace(t)
	u, _ := e.Usage().Load()
	for _, name := range []string{"skillsync", "writing-skills"} {
		if s := u.Skills[name]; s == nil || s.FirstSeenAt == nil || !s.FirstSeenAt.Equal(c.t) {
			t.Errorf("%s first seen = %+v", name, s)
		}
	}
}
