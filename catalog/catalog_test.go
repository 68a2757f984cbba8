package catalog_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/catalog"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
)

// workspace is a workspace with a global, a workspace and a user layer
// and a marketplace source the cache does not hold yet.
func workspace(t *testing.T) *catalog.Workspace {
	t.Helper()
	root := t.TempDir()
	global, skills, user := filepath.Join(root, "global"), filepath.Join(root, "skills"), filepath.Join(root, "alice", "skills")
	skilltest.Skill(t, global, "pdf", "Global PDF.", nil)
	skilltest.Skill(t, skills, "pdf", "Workspace PDF.", nil)
	skilltest.Skill(t, user, "notes", "Alice's notes.", nil)
	skilltest.Skill(t, skills, "secret", "Hidden.", nil)
	return &catalog.Workspace{CacheDir: filepath.Join(root, ".skills-cache"), SkillsDir: skills, Sources: []string{"team"},
		Layers: catalog.Layers(global, skills, user), Hidden: []string{"secret"}, User: "alice",
		Host: func() (string, string) { return "host-1", "" }}
}

func TestReadMergesTheLayersInPlace(t *testing.T) {
	t.Parallel()
	w := workspace(t)
	cat, err := w.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pdf, ok := cat.Lookup("PDF")
	if !ok || pdf.Layer != layering.Workspace || len(pdf.Shadowed) != 1 || pdf.Shadowed[0].Layer != layering.Global {
		t.Fatalf("pdf = %+v, want the workspace's copy shadowing the global one", pdf)
	}
	if want := filepath.Join(w.SkillsDir, "pdf"); pdf.Dir != want {
		t.Errorf("pdf.Dir = %s, want %s", pdf.Dir, want)
	}
	if s, ok := cat.Lookup("secret"); !ok || !s.Hidden {
		t.Errorf("secret = %+v, want it kept and marked hidden", s)
	}
	var notSynced bool
	for _, p := range cat.Problems {
		notSynced = notSynced || p.Rule == "not-synced" && p.Source == "team"
	}
	if !notSynced {
		t.Errorf("problems = %+v, want source team not synced yet", cat.Problems)
	}
}

func TestCopiesAndStates(t *testing.T) {
	t.Parallel()
	w := workspace(t)
	ctx := context.Background()
	cat, err := w.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	notes, _ := cat.Lookup("notes")
	c, ok := w.CopyOf(&notes.Entry)
	if !ok || c.String() != "user:alice/notes" {
		t.Fatalf("copy of notes = %v, %v; want user:alice/notes", c, ok)
	}
	if _, ok := catalog.CopyOf(&layering.Entry{Layer: layering.Marketplace, Source: "../x", Skill: notes.Skill}, ""); ok {
		t.Error("a marketplace copy of an unsafe source name was keyed")
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := w.Store(cat).Update(ctx, func(u *curator.Usage) error { u.SetState(c, curator.Stale, now); return nil }); err != nil {
		t.Fatal(err)
	}
	if cat, err = w.Read(ctx); err != nil {
		t.Fatal(err)
	}
	if notes, _ = cat.Lookup("notes"); notes.State != string(curator.Stale) {
		t.Errorf("notes.State = %q, want stale from the usage file", notes.State)
	}
	dirs := w.LayerDirs()
	if len(dirs) != 2 || dirs[0].Layer != layering.Workspace || dirs[1].Owner != "alice" {
		t.Errorf("layer dirs = %+v, want the workspace's and alice's", dirs)
	}
}

func TestStampMovesWithALocalSkill(t *testing.T) {
	t.Parallel()
	w := workspace(t)
	if got := w.WatchDirs(); len(got) != 4 || got[0] != w.CacheDir {
		t.Fatalf("watch dirs = %v, want the cache and three layers", got)
	}
	before := w.Stamp()
	if w.Stamp() != before {
		t.Fatal("the stamp moved with nothing changed")
	}
	skilltest.Append(t, filepath.Join(w.SkillsDir, "pdf", "SKILL.md"), "\nMore.\n")
	if w.Stamp() == before {
		t.Error("the stamp did not move when a workspace skill changed")
	}
}
