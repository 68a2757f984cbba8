package skillsync

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
)

// TestSyncReportsARepairAsARepair: a cached skill whose files a sync
// --check-stat or --verify writes again, its content unchanged upstream,
// is reported and audited as repaired, not updated; a skill that changed
// upstream in the same sync is still updated.
func TestSyncReportsARepairAsARepair(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/a", "The a skill.")
	up.Skill("skills/b", "The b skill.")
	up.Commit("one")
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\ntargets: []\n")
	mustSync(t, e, SyncOptions{})
	tampered := filepath.Join(ws, ".skills-cache", "team", "a", "SKILL.md")
	for _, opts := range []SyncOptions{{StatCheck: true}, {Verify: true}} {
		if err := os.WriteFile(tampered, []byte("tampered, and longer than it was before"), 0o644); err != nil {
			t.Fatal(err)
		}
		up.Skill("skills/b", "The b skill, edited at "+time.Now().String())
		up.Commit("b moves")
		r := mustSync(t, e, opts)
		if !slices.Equal(r.Skills.Repaired, []string{"team/a"}) || !slices.Equal(r.Skills.Updated, []string{"team/b"}) {
			t.Errorf("%+v: repaired %v, updated %v; want [team/a], [team/b]", opts, r.Skills.Repaired, r.Skills.Updated)
		}
	}
	events, _, err := e.Audit().Read(time.Time{}, "repaired")
	if err != nil || len(events) != 2 || events[0].Target != "team/a" || events[0].BeforeHash != events[0].AfterHash {
		t.Errorf("audit of the repairs: %+v %v", events, err)
	}
}

// TestSyncReportsAModeChangeAsAnUpdate: a file made executable upstream
// changes no skill hash (a hash covers paths, sizes and contents) but is
// upstream's change, reported and audited as updated, not repaired.
func TestSyncReportsAModeChangeAsAnUpdate(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/a", "The a skill.")
	up.Write("skills/a/scripts/run.sh", "echo a\n", 0o644)
	up.Commit("one")
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\ntargets: []\n")
	mustSync(t, e, SyncOptions{})
	up.Write("skills/a/scripts/run.sh", "echo a\n", 0o755)
	up.Commit("executable")
	r := mustSync(t, e, SyncOptions{})
	if !slices.Equal(r.Skills.Updated, []string{"team/a"}) || len(r.Skills.Repaired) != 0 {
		t.Errorf("updated %v, repaired %v; want [team/a], none", r.Skills.Updated, r.Skills.Repaired)
	}
}

// TestSyncRepairsWithItsFileRecordsLost: with the cache's file records
// gone, a tampered file that sync --verify writes again is still a
// repair: the skill's hash is the same, and no mode is known to differ.
func TestSyncRepairsWithItsFileRecordsLost(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/a", "The a skill.")
	up.Commit("one")
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\ntargets: []\n")
	mustSync(t, e, SyncOptions{})
	records, _ := filepath.Glob(filepath.Join(ws, ".skills-cache", ".records", "*.files"))
	for _, r := range records {
		if err := os.Remove(r); err != nil {
			t.Fatal(err)
		}
	}
	if len(records) == 0 {
		t.Fatal("no file records to lose")
	}
	if err := os.WriteFile(filepath.Join(ws, ".skills-cache", "team", "a", "SKILL.md"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustSync(t, e, SyncOptions{Verify: true})
	if !slices.Equal(r.Skills.Repaired, []string{"team/a"}) || len(r.Skills.Updated) != 0 {
		t.Errorf("repaired %v, updated %v; want [team/a], none", r.Skills.Repaired, r.Skills.Updated)
	}
}
