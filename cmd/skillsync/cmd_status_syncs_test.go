package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
)

// TestStatusAfterASyncByHand: without a daemon, status tells what the
// last sync by hand found. A sync whose remote is gone makes status name
// the source's error and exit 1, as its help says; the next sync that
// succeeds clears it and says when the source synced. Curation is said to
// run only under a daemon or cron, not given a time nothing keeps.
func TestStatusAfterASyncByHand(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Skill("pdf", "Read PDF files.")
	repo.Commit("one")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+repo.URL()+"\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	// The record is the cache's own, no entry a sync warns of.
	if r := run(t, ws, "sync"); r.code != 0 || strings.Contains(r.stderr, materialize.SyncsName) {
		t.Errorf("a second sync: %d\n%s", r.code, r.stderr)
	}
	r := run(t, ws, "status", "--json")
	st := decode[skillsync.WorkspaceStatus](t, r)
	if r.code != 0 || st.Sources[0].SyncedAt == nil || st.Sources[0].Error != "" || st.Curation.NextRun != nil {
		t.Fatalf("status after a sync: exit %d %+v\n%s", r.code, st, r.stderr)
	}
	synced := *st.Sources[0].SyncedAt
	if r := run(t, ws, "status"); r.code != 0 || !strings.Contains(r.stdout, "curation: 0 stale, 0 archived, last run -, runs only under skillsync daemon (or cron): no daemon holds this workspace") {
		t.Errorf("status without a daemon: %d\n%s", r.code, r.stdout)
	}

	if err := os.Rename(repo.Dir, repo.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "sync"); r.code != 1 {
		t.Fatalf("sync without its remote: %d\n%s", r.code, r.stderr)
	}
	r = run(t, ws, "status", "--json")
	st = decode[skillsync.WorkspaceStatus](t, r)
	if s := st.Sources[0]; r.code != 1 || s.Error == "" || s.CheckedAt == nil || s.SyncedAt == nil || !s.SyncedAt.Equal(synced) {
		t.Errorf("status after a failed sync: exit %d %+v", r.code, s)
	}
	if !strings.Contains(strings.Join(st.Attention, "\n"), "source team fails: ") {
		t.Errorf("attention after a failed sync: %q", st.Attention)
	}
	if r := run(t, ws, "status"); r.code != 1 || !strings.Contains(r.stdout, "needs a person: source team fails") {
		t.Errorf("status after a failed sync: %d\n%s", r.code, r.stdout)
	}

	if err := os.Rename(repo.Dir+".gone", repo.Dir); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "update"); r.code != 0 {
		t.Fatalf("update: %d\n%s", r.code, r.stderr)
	}
	r = run(t, ws, "status", "--json")
	st = decode[skillsync.WorkspaceStatus](t, r)
	if s := st.Sources[0]; r.code != 0 || s.Error != "" || s.SyncedAt == nil || s.SyncedAt.Before(*st.Sources[0].CheckedAt) {
		t.Errorf("status after the source mended: exit %d %+v %q", r.code, s, st.Attention)
	}
}

// TestStatusAfterASyncWithATargetRefused: a sync that refused a target
// (a symbolic link on its path) still committed the cache and wrote the
// lock, so status shows each source's last success, and says apart that
// the target is refused and how to mend it; it exits 1 for the refusal.
func TestStatusAfterASyncWithATargetRefused(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Skill("pdf", "Read PDF files.")
	repo.Commit("one")
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\n  - name: team\n    git: "+repo.URL()+"\ntargets:\n  - dir: .claude/skills\n  - dir: .agents/skills\n")
	if r := run(t, ws, "sync"); r.code != 1 {
		t.Fatalf("sync with a linked target: %d\n%s", r.code, r.stderr)
	}
	if !skilltest.Exists(filepath.Join(ws, "skillsync.lock")) {
		t.Fatal("the sync wrote no lock")
	}
	r := run(t, ws, "status", "--json")
	st := decode[skillsync.WorkspaceStatus](t, r)
	if r.code != 1 {
		t.Errorf("status exits %d, want 1 for the refused target", r.code)
	}
	for _, s := range st.Sources {
		if s.SyncedAt == nil || s.Error != "" {
			t.Errorf("source %s: synced at %v, error %q; the sources synced", s.Name, s.SyncedAt, s.Error)
		}
	}
	attention := strings.Join(st.Attention, "\n")
	if !strings.Contains(attention, filepath.Join(ws, ".claude")+" is a symbolic link") || !strings.Contains(attention, "replace the link with a folder") {
		t.Errorf("status does not say the target is refused and what to do: %q", st.Attention)
	}
	if strings.Contains(attention, "source ") {
		t.Errorf("status blames a source for the target: %q", st.Attention)
	}
	synced := regexp.MustCompile(`(?m)^team +git +[0-9a-f]{12} +\d{4}-\d\d-\d\d `)
	if r := run(t, ws, "status"); !strings.Contains(r.stdout, ": refused, every sync leaves it as it is") || !synced.MatchString(r.stdout) {
		t.Errorf("status:\n%s", r.stdout)
	}
}

// TestStatusOfASourceThatNeverSynced: a source whose every sync failed
// is told once, with its error and its fix; not also as one to run
// skillsync sync for, which would fail the same way.
func TestStatusOfASourceThatNeverSynced(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    dir: nothere\n")
	if r := run(t, ws, "sync"); r.code != 1 {
		t.Fatalf("sync of a missing folder: %d\n%s", r.code, r.stderr)
	}
	r := run(t, ws, "status", "--json")
	st := decode[skillsync.WorkspaceStatus](t, r)
	attention := strings.Join(st.Attention, "\n")
	if r.code != 1 || !strings.Contains(attention, "source team fails: ") || !strings.Contains(attention, "set dir: to where the skills are") {
		t.Errorf("status after a failed sync: exit %d %q", r.code, st.Attention)
	}
	if strings.Contains(attention, "source team has not been synced yet") {
		t.Errorf("status asks for a sync that fails the same way: %q", st.Attention)
	}
}

// TestStatusOfATargetNoSyncWrote: before the first sync (or once its
// folder is removed) a target holds nothing of skillsync's; status says
// it is not written yet and that sync writes it, never "in sync".
func TestStatusOfATargetNoSyncWrote(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\ntargets:\n  - dir: .claude/skills\n")
	target := filepath.Join(ws, ".claude", "skills")
	for _, step := range []struct {
		name   string
		before func()
		synced bool
	}{
		{"before the first sync", func() {}, false},
		{"after it", func() {
			if r := run(t, ws, "sync"); r.code != 0 {
				t.Fatalf("sync: %d\n%s", r.code, r.stderr)
			}
		}, true},
		{"its folder removed", func() {
			if err := os.RemoveAll(target); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		step.before()
		r := run(t, ws, "status", "--json")
		st := decode[skillsync.WorkspaceStatus](t, r)
		told := strings.Contains(strings.Join(st.Attention, "\n"), "target "+target+" has not been written by a sync yet: skillsync sync writes it")
		if tg := st.Targets[0]; tg.InSync != step.synced || tg.Unsynced == step.synced || told == step.synced {
			t.Errorf("%s: %+v, attention %q", step.name, tg, st.Attention)
		}
		if r := run(t, ws, "status"); strings.Contains(r.stdout, "target "+target+": in sync") != step.synced ||
			strings.Contains(r.stdout, "target "+target+": not written by a sync yet") == step.synced {
			t.Errorf("%s:\n%s", step.name, r.stdout)
		}
	}
}
