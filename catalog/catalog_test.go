package catalog_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
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

func TestFindUseAndPin(t *testing.T) {
	t.Parallel()
	w := workspace(t)
	w.ConfigFile = "/ws/skillsync.yaml"
	ctx := context.Background()
	cat, err := w.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var unknown *catalog.UnknownSkillError
	if _, err := w.Find(cat, "pfd", false); !errors.As(err, &unknown) || !slices.Contains(unknown.Near, "pdf") {
		t.Errorf("Find(pfd) = %v, want an unknown skill near pdf", err)
	}
	var hidden *catalog.HiddenError
	if _, err := w.Find(cat, "secret", false); !errors.As(err, &hidden) || hidden.File != w.ConfigFile {
		t.Errorf("Find(secret) = %v, want hidden by %s", err, w.ConfigFile)
	}
	if s, err := w.Find(cat, "SECRET", true); err != nil || !s.Hidden {
		t.Errorf("Find(SECRET, withHidden) = %+v, %v; want it marked hidden", s, err)
	}
	if _, err := w.Use(ctx, "secret", curator.Use{From: curator.FromCLI}); !errors.As(err, &hidden) {
		t.Errorf("Use(secret) = %v, want it refused as hidden", err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if name, err := w.Use(ctx, "Notes", curator.Use{From: curator.FromCLI, At: at, Actor: "test"}); err != nil || name != "notes" {
		t.Fatalf("Use(Notes) = %q, %v", name, err)
	}
	if _, err := w.Pin(ctx, "secret", true, "test", at); err != nil {
		t.Fatalf("Pin(secret): %v", err)
	}
	u, err := w.Usage().Load()
	if err != nil {
		t.Fatal(err)
	}
	notes := u.Skill(curator.Copy{Layer: layering.User, Owner: "alice", Name: "notes"})
	if notes == nil || notes.UseCount != 1 || notes.LastUsedAt == nil || !notes.LastUsedAt.Equal(at) {
		t.Errorf("alice's notes = %+v, want one use at %s", notes, at)
	}
	if s := u.Skill(curator.Copy{Layer: layering.Workspace, Name: "secret"}); s == nil || !s.Pinned {
		t.Errorf("workspace/secret = %+v, want pinned", s)
	}
	f, _, err := w.Open(ctx, "pdf", "")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, err := w.Open(ctx, "pdf", "../notes/SKILL.md"); err == nil {
		t.Error("Open read a file outside the skill's directory")
	}
}
