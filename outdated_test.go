package skillsync

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestOutdatedListsWhatAnUpdateWouldBring: a source at its locked commit
// is current; once upstream moves, outdated names the new commit and the
// skills an update would add, change and remove, and writes nothing.
func TestOutdatedListsWhatAnUpdateWouldBring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/keep", "Kept.")
	up.Skill("skills/edit", "Before.")
	up.Skill("skills/drop", "Dropped.")
	first := up.Commit("one")
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\n")
	mustSync(t, e, SyncOptions{})

	out, err := e.Outdated(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Behind || out[0].Locked != first || out[0].Upstream != first || out[0].Error != "" {
		t.Fatalf("outdated at the locked commit = %+v, want current at %s", out, first)
	}

	up.Skill("skills/edit", "After.")
	up.Skill("skills/new", "New.")
	up.Remove("skills/drop")
	second := up.Commit("two")
	stamp, _ := e.Stamp()
	if out, err = e.Outdated(ctx); err != nil {
		t.Fatal(err)
	}
	o := out[0]
	if !o.Behind || o.Locked != first || o.Upstream != second {
		t.Fatalf("outdated after a commit = %+v, want behind from %s to %s", o, first, second)
	}
	if !slices.Equal(o.Added, []string{"new"}) || !slices.Equal(o.Changed, []string{"edit"}) || !slices.Equal(o.Removed, []string{"drop"}) {
		t.Errorf("added %v, changed %v, removed %v; want [new], [edit], [drop]", o.Added, o.Changed, o.Removed)
	}
	if now, _ := e.Stamp(); now != stamp {
		t.Error("outdated changed the workspace's cache")
	}
}

// TestOutdatedOfAListingCutAtMaxEntries: a listing that stopped at
// max_entries says what an update would change past the cut is unknown
// (the source's check failed), rather than listing every skill it did
// not reach as removed, which the update would keep.
func TestOutdatedOfAListingCutAtMaxEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := fiveSkills(t)
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	up.Skill("skills/e", "The e skill, edited.")
	up.Commit("two")
	cfg := filepath.Join(ws, config.FileName)
	skilltest.WriteFile(t, cfg, "max_entries: 8\n"+text)
	out, err := reload(t, cfg).Outdated(ctx)
	if !errors.Is(err, ErrFailed) || len(out) != 1 || !strings.Contains(out[0].Error, "stopped at max_entries") || len(out[0].Removed) != 0 {
		t.Errorf("outdated of a cut listing: %v, %+v", err, out)
	}
}
