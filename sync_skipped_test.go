package skillsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/lock"
)

// TestSyncSkippedSkillsArePartialOnEveryKind (issue 24): a source whose
// skills max_source_size skips is partly synced, exit 3, on PostgreSQL as
// on git, and says so on the next sync too (the cache does not hold the
// whole revision, so the next sync looks again).
func TestSyncSkippedSkillsArePartialOnEveryKind(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Own(t)
	dsn := c.DSNFile(t, "postgres")
	up := gittest.NewRepo(t, "main")
	for _, name := range []string{"a-small", "b-big"} {
		up.Skill("skills/"+name, "The "+name+" skill.")
	}
	up.Write("skills/b-big/data.txt", strings.Repeat("b", 3000), 0o644)
	up.Commit("one")
	e, _ := newWorkspace(t, "max_source_size: 2000\nrepositories:\n  - name: team\n    dsn_file: "+dsn+"\n    create: true\n  - name: gitteam\n    git: "+up.URL()+"\ntargets: []\n")
	for _, name := range []string{"a-small", "b-big"} {
		extra := map[string]string{}
		if name == "b-big" {
			extra["data.txt"] = strings.Repeat("b", 3000)
		}
		dir := skilltest.Skill(t, t.TempDir(), name, "The "+name+" skill.", extra)
		if _, err := e.Gate().Publish(ctx, dir, "team", "alice"); err != nil {
			t.Fatal(err)
		}
	}
	for _, when := range []string{"first sync", "second sync"} {
		r, err := e.Sync(ctx, SyncOptions{})
		if !errors.Is(err, ErrPartial) {
			t.Errorf("%s: err = %v, want ErrPartial", when, err)
		}
		if r == nil {
			t.Fatalf("%s: no report", when)
		}
		for _, s := range r.Sources {
			if s.Status != StatusPartial || s.Skills != 1 {
				t.Errorf("%s: %s is %s with %d skills, want partial with 1", when, s.Source, s.Status, s.Skills)
			}
		}
		for _, p := range []string{"b-big", "skills/b-big"} {
			if !hasRule(r, "source-too-large", p) {
				t.Errorf("%s: no source-too-large for %s: %+v", when, p, r.Problems)
			}
		}
	}
}

// TestSyncMaxSourceSizeSkippingEverySkill (issue 24): a source all of
// whose skills max_source_size skips says so, naming the limit, on every
// sync: not source-empty, not unchanged.
func TestSyncMaxSourceSizeSkippingEverySkill(t *testing.T) {
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/a", "A.")
	up.Skill("skills/b", "B.")
	up.Commit("one")
	e, _ := newWorkspace(t, "max_source_size: 10\nrepositories:\n  - name: team\n    git: "+up.URL()+"\ntargets: []\n")
	for _, when := range []string{"first sync", "second sync"} {
		r, err := e.Sync(context.Background(), SyncOptions{})
		if !errors.Is(err, ErrPartial) || r == nil {
			t.Fatalf("%s: err = %v, want ErrPartial", when, err)
		}
		if s := r.Sources[0]; s.Status != StatusPartial || s.Skills != 0 {
			t.Errorf("%s: %+v, want partial with no skills", when, s)
		}
		said := false
		for _, p := range r.Problems {
			if p.Rule == "source-empty" {
				t.Errorf("%s: %+v", when, p)
			}
			if p.Rule == "source-too-large" && p.Skill == "" && strings.Contains(p.Message, "max_source_size 10") {
				said = true
			}
		}
		if !said {
			t.Errorf("%s: no problem says max_source_size skipped every skill: %+v", when, r.Problems)
		}
	}
}

// TestSyncLeavesOutWhatALowerMaxSourceSizeSkips: a skill the cache holds
// that a lowered max_source_size now skips is left out of the cache and
// the lock, as the limit asks, the same on every machine (a fresh checkout
// locks what an old cache does); the source is partial and says why on
// every sync, and raising the limit brings the skill back.
func TestSyncLeavesOutWhatALowerMaxSourceSizeSkips(t *testing.T) {
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/a-small", "The small skill.")
	up.Skill("skills/b-big", "The big skill.")
	up.Write("skills/b-big/data.txt", strings.Repeat("b", 3000), 0o644)
	up.Commit("one")
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\ntargets:\n  - dir: out\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	cfg := filepath.Join(ws, config.FileName)
	for _, when := range []string{"limit lowered", "again"} {
		skilltest.WriteFile(t, cfg, "max_source_size: 2000\n"+text)
		r, err := reload(t, cfg).Sync(ctx, SyncOptions{})
		if !errors.Is(err, ErrPartial) || r == nil || !hasRule(r, "source-too-large", "skills/b-big") {
			t.Fatalf("%s: err = %v, want ErrPartial and b-big named", when, err)
		}
		if lf, _, err := lock.Read(filepath.Join(ws, "skillsync.lock"), Kinds()); err != nil || lf.Sources["team"].Skills["b-big"] != "" {
			t.Errorf("%s: the lock has b-big past the limit: %v", when, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".skills-cache", "team", "b-big")); err == nil {
		t.Error("b-big is still cached past the limit")
	}
	skilltest.WriteFile(t, cfg, text)
	r, err := reload(t, cfg).Sync(ctx, SyncOptions{})
	if err != nil || r.Sources[0].Skills != 2 || !slices.Equal(r.Skills.Added, []string{"team/b-big"}) {
		t.Errorf("limit raised again: %v, %+v, added %v", err, r.Sources, r.Skills.Added)
	}
}

// TestSyncKeepsADirSourceWhoseFolderWent: a dir: source whose folder was
// moved away fails and keeps its cached and placed skills, rather than
// reading as a source that has none.
func TestSyncKeepsADirSourceWhoseFolderWent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    dir: teamdir\ntargets:\n  - dir: out\n")
	skilltest.Skill(t, filepath.Join(ws, "teamdir"), "a", "The a skill.", nil)
	mustSync(t, e, SyncOptions{})
	if err := os.Rename(filepath.Join(ws, "teamdir"), filepath.Join(ws, "teamdir.off")); err != nil {
		t.Fatal(err)
	}
	r, err := e.Sync(ctx, SyncOptions{})
	if !errors.Is(err, ErrFailed) || r == nil || r.Sources[0].Status != StatusFailed || len(r.Skills.Removed) != 0 {
		t.Fatalf("sync without the folder: %v, %+v", err, r)
	}
	for _, p := range []string{".skills-cache/team/a/SKILL.md", "out/a/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Errorf("%s lost: %v", p, err)
		}
	}
}

// TestSyncKeepsWhatAListingCutAtMaxEntriesDidNotReach: a source whose
// listing stops at max_entries is partly synced (exit 3), and the skills
// past the cut keep their cached and placed copies rather than being
// removed; a source that had none says so as partial, not as empty.
func TestSyncKeepsWhatAListingCutAtMaxEntriesDidNotReach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := fiveSkills(t)
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\ntargets:\n  - dir: out\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	cfg := filepath.Join(ws, config.FileName)
	skilltest.WriteFile(t, cfg, "max_entries: 8\n"+text)
	for _, when := range []string{"limit lowered", "again"} {
		r, err := reload(t, cfg).Sync(ctx, SyncOptions{})
		if !errors.Is(err, ErrPartial) || r == nil || r.Sources[0].Status != StatusPartial || !hasRule(r, "source-too-many-entries", "skills/a") ||
			len(r.Skills.Removed) != 0 || hasRule(r, "source-empty", "") {
			t.Fatalf("%s: err = %v, report %+v", when, err, r)
		}
		for _, name := range []string{"a", "e"} {
			for _, p := range []string{".skills-cache/team/" + name + "/SKILL.md", "out/" + name + "/SKILL.md"} {
				if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
					t.Errorf("%s: %s lost: %v", when, p, err)
				}
			}
		}
	}
	skilltest.WriteFile(t, cfg, text)
	if r, err := reload(t, cfg).Sync(ctx, SyncOptions{}); err != nil || r.Sources[0].Skills != 5 || len(r.Skills.Removed) != 0 {
		t.Errorf("limit raised again: %v, %+v", err, r.Sources)
	}

	fresh, _ := newWorkspace(t, "max_entries: 8\n"+text)
	r, err := fresh.Sync(ctx, SyncOptions{})
	if !errors.Is(err, ErrPartial) || r == nil || hasRule(r, "source-empty", "") {
		t.Errorf("a fresh workspace cut at max_entries: %v, %+v", err, r)
	}
}

// TestFrozenSyncRefusesALockedSkillItDidNotBring: a sync --frozen that
// does not bring a skill the lock has (here a fresh checkout whose
// listing stops at max_entries; as well a skill a new exclude: drops)
// fails and leaves skillsync.lock as it was, rather than writing a lock
// without it.
func TestFrozenSyncRefusesALockedSkillItDidNotBring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := fiveSkills(t)
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	locked, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, config, says string }{
		{"cut", "max_entries: 8\n" + text, "- skill team/a is in the lock, and this sync did not bring it"},
		{"excluded", text + "    exclude: [c]\n", "- skill team/c is in the lock, and this sync did not bring it"},
	} {
		fresh := t.TempDir()
		skilltest.WriteFile(t, filepath.Join(fresh, config.FileName), tc.config)
		skilltest.WriteFile(t, filepath.Join(fresh, "skillsync.lock"), string(locked))
		_, err := reload(t, filepath.Join(fresh, config.FileName)).Sync(ctx, SyncOptions{Frozen: true})
		var fe *FrozenError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: frozen sync = %v, want a frozen error saying %q", tc.name, err, tc.says)
		}
		if now, _ := os.ReadFile(filepath.Join(fresh, "skillsync.lock")); string(now) != string(locked) {
			t.Errorf("%s: the frozen sync rewrote the lock:\n%s", tc.name, now)
		}
	}
}

// TestFrozenSyncChecksWhatItKeeps: sync --frozen fails, and leaves the
// lock as it was, when a copy it keeps from an earlier sync (a read cut
// at max_entries) or a skill this machine archived does not hash as the
// lock says: it never rewrites the lock it was asked to check.
func TestFrozenSyncChecksWhatItKeeps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := fiveSkills(t)
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})

	// The team moves on: e changes, and its lock says so.
	up.Skill("skills/e", "The e skill, edited.")
	up.Commit("two")
	other, otherWS := newWorkspace(t, text)
	mustSync(t, other, SyncOptions{})
	moved, err := os.ReadFile(filepath.Join(otherWS, "skillsync.lock"))
	if err != nil {
		t.Fatal(err)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.lock"), string(moved))
	cfg := filepath.Join(ws, config.FileName)
	skilltest.WriteFile(t, cfg, "max_entries: 8\n"+text)
	_, err = reload(t, cfg).Sync(ctx, SyncOptions{Frozen: true})
	var fe *FrozenError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "~ skill team/e: lock has") || !strings.Contains(err.Error(), "the copy kept from an earlier sync") {
		t.Errorf("frozen sync keeping an old copy = %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(ws, "skillsync.lock")); string(now) != string(moved) {
		t.Errorf("the frozen sync rewrote the lock:\n%s", now)
	}

	// A skill archived here whose locked hash is not the source's.
	skilltest.WriteFile(t, cfg, text)
	mustSync(t, reload(t, cfg), SyncOptions{})
	later := time.Now().Add(200 * 24 * time.Hour)
	e = reload(t, cfg)
	if _, err := e.Use(ctx, "a", false); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := e.Pin(ctx, name, true); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Curate(ctx, CurateOptions{Now: later}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, reload(t, cfg), SyncOptions{})
	lockPath := filepath.Join(ws, "skillsync.lock")
	lock, _ := os.ReadFile(lockPath)
	if !strings.Contains(string(lock), `"e"`) {
		t.Fatalf("the lock lost the archived e:\n%s", lock)
	}
	i := strings.Index(string(lock), `"e": "`) + len(`"e": "`)
	tampered := string(lock[:i]) + strings.Repeat("0", 64) + string(lock[i+64:])
	skilltest.WriteFile(t, lockPath, tampered)
	_, err = reload(t, cfg).Sync(ctx, SyncOptions{Frozen: true})
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "~ skill team/e (archived here): lock has 00") {
		t.Errorf("frozen sync with an archived skill's hash changed in the lock = %v", err)
	}
	if now, _ := os.ReadFile(lockPath); string(now) != tampered {
		t.Errorf("the frozen sync rewrote the lock:\n%s", now)
	}
}

// TestACutListingNeverTakesTheLosingCopy: with two copies of one name
// (the first by path wins), no cut of the listing at any max_entries
// makes the sync replace the winner's cached copy with the other copy:
// a cut says nothing of a copy it did not reach.
func TestACutListingNeverTakesTheLosingCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	up.Write(".claude/skills/foo/SKILL.md", "---\nname: foo\ndescription: The winner.\n---\nA\n", 0o644)
	up.Write("skills/foo/SKILL.md", "---\nname: foo\ndescription: The other copy.\n---\nB\n", 0o644)
	for _, name := range []string{"p", "q", "r"} { // after foo
		up.Skill("skills/"+name, "The "+name+" skill.")
	}
	up.Commit("one")
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	cached := filepath.Join(ws, ".skills-cache", "team", "foo", "SKILL.md")
	if data, _ := os.ReadFile(cached); !strings.Contains(string(data), "The winner.") {
		t.Fatalf("the full sync took the other copy:\n%s", data)
	}
	cfg := filepath.Join(ws, config.FileName)
	for n := 2; n <= 30; n++ {
		skilltest.WriteFile(t, cfg, fmt.Sprintf("max_entries: %d\n%s", n, text))
		if _, err := reload(t, cfg).Sync(ctx, SyncOptions{}); err != nil && !errors.Is(err, ErrPartial) {
			t.Fatalf("max_entries %d: %v", n, err)
		}
		if data, _ := os.ReadFile(cached); !strings.Contains(string(data), "The winner.") {
			t.Errorf("max_entries %d: the cache took the other copy:\n%s", n, data)
		}
	}
}

// TestFrozenSyncRefusesAKeptCopyTheLockLacks: a sync --frozen whose read
// cannot tell (cut at max_entries) keeps a cached skill that the lock,
// from a revision without it, does not have: that is a mismatch, not a
// skill to place.
func TestFrozenSyncRefusesAKeptCopyTheLockLacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := fiveSkills(t)
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	up.Remove("skills/e")
	up.Commit("two")
	other, otherWS := newWorkspace(t, text)
	mustSync(t, other, SyncOptions{})
	lock, err := os.ReadFile(filepath.Join(otherWS, "skillsync.lock"))
	if err != nil || strings.Contains(string(lock), `"e"`) {
		t.Fatalf("the lock of the second revision: %v\n%s", err, lock)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.lock"), string(lock))
	cfg := filepath.Join(ws, config.FileName)
	skilltest.WriteFile(t, cfg, "max_entries: 8\n"+text)
	_, err = reload(t, cfg).Sync(ctx, SyncOptions{Frozen: true})
	var fe *FrozenError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "+ skill team/e, a copy kept from an earlier sync (this read could not tell), is not in the lock") {
		t.Errorf("frozen sync keeping a copy the lock lacks = %v", err)
	}
}

// fiveSkills is an upstream repository of five skills, a to e, under
// skills/, committed: more than a low max_entries lists.
func fiveSkills(t *testing.T) *gittest.Repo {
	t.Helper()
	up := gittest.NewRepo(t, "main")
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		up.Skill("skills/"+name, "The "+name+" skill.")
	}
	up.Commit("one")
	return up
}
