package skillsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestSyncRenamedSourceKeepsItsSkills: a source renamed in the config
// (the same URL under a new name) starts from what its old name had in
// the cache. With its remote out of reach it keeps its last good files,
// in the cache and every target, as any source that fails does; before,
// the old name's copy was pruned and the new one had none, and the sync
// took the source's skills out of the targets. With the remote back it
// syncs under the new name, the old one gone from the cache and the lock.
func TestSyncRenamedSourceKeepsItsSkills(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/team-one", "From git.")
	up.Commit("one")
	text := "repositories:\n  - name: %s\n    git: " + up.URL() + "\ntargets:\n  - dir: .claude/skills\n  - dir: linked\n    mode: symlink\n"
	e, ws := newWorkspace(t, fmt.Sprintf(text, "team"))
	mustSync(t, e, SyncOptions{})
	placed := []string{filepath.Join(ws, ".claude/skills/team-one/SKILL.md"), filepath.Join(ws, "linked/team-one/SKILL.md")}
	for _, p := range placed {
		if !skilltest.Exists(p) {
			t.Fatalf("%s was not placed", p)
		}
	}

	path := filepath.Join(ws, config.FileName)
	skilltest.WriteFile(t, path, fmt.Sprintf(text, "team2"))
	gone := up.Dir + ".gone"
	if err := os.Rename(up.Dir, gone); err != nil {
		t.Fatal(err)
	}
	r, err := reload(t, path).Sync(context.Background(), SyncOptions{})
	if !errors.Is(err, ErrFailed) && !errors.Is(err, ErrPartial) {
		t.Errorf("sync with the renamed source out of reach = %v, want it failed", err)
	}
	if len(r.Sources) != 1 || r.Sources[0].Source != "team2" || r.Sources[0].Status != StatusFailed {
		t.Errorf("sources %+v", r.Sources)
	}
	if len(r.Skills.Removed) != 0 {
		t.Errorf("the sync removed %v", r.Skills.Removed)
	}
	for _, p := range append(placed, filepath.Join(ws, ".skills-cache/team2/team-one/SKILL.md")) {
		if !skilltest.Exists(p) {
			t.Errorf("%s is gone", p)
		}
	}
	if skilltest.Exists(filepath.Join(ws, ".skills-cache/team")) {
		t.Error("the old name's folder is still in the cache")
	}

	if err := os.Rename(gone, up.Dir); err != nil {
		t.Fatal(err)
	}
	r = mustSync(t, reload(t, path), SyncOptions{})
	if len(r.Skills.Removed) != 0 || r.Sources[0].Status == StatusFailed || r.Files.Written != 0 {
		t.Errorf("the sync with the remote back: %+v", r)
	}
	for _, p := range placed {
		if !skilltest.Exists(p) {
			t.Errorf("%s is gone", p)
		}
	}
	locked := readLock(t, ws)
	if got := slices.Sorted(maps.Keys(locked.Sources)); !slices.Equal(got, []string{"team2"}) {
		t.Errorf("lock sources %v, want team2 alone", got)
	}
}
