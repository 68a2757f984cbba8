package skillsync

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
)

func hasSkillProblem(r *SyncReport, skillName string) bool {
	return slices.ContainsFunc(r.Problems, func(p ProblemReport) bool { return p.Skill == skillName })
}

// TestSyncReadsOnlyChangedSkills: a skill whose git tree did not change
// since the last sync is taken from the cache's records, its SKILL.md not
// parsed again (its warnings, which only a parse finds, are not repeated);
// a verifying sync, or other discovery settings, read it again.
func TestSyncReadsOnlyChangedSkills(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	// Not lower-case: a warning, or an error under strict.
	up.Write("skills/beta/SKILL.md", "---\nname: Beta\ndescription: Beta.\n---\n# Beta\n", 0)
	up.Commit("two skills")
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
	e, ws := newWorkspace(t, text)
	if r := mustSync(t, e, SyncOptions{}); !hasSkillProblem(r, "Beta") {
		t.Fatalf("the first sync did not warn about Beta: %+v", r.Problems)
	}

	up.Write("skills/alpha/notes.md", "new", 0o644)
	up.Commit("alpha grows")
	r := mustSync(t, e, SyncOptions{})
	if !slices.Equal(r.Skills.Updated, []string{"team/alpha"}) || r.Files.Written != 1 {
		t.Errorf("updated %v, files %+v", r.Skills.Updated, r.Files)
	}
	if hasSkillProblem(r, "Beta") {
		t.Error("Beta, unchanged, was parsed again")
	}
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}

	up.Write("skills/alpha/notes.md", "newer", 0o644)
	up.Commit("alpha changes")
	if r := mustSync(t, e, SyncOptions{Verify: true}); !hasSkillProblem(r, "Beta") {
		t.Error("a verifying sync took Beta from its record")
	}

	// Strict changes what a skill is read as: the records do not stand in.
	if err := os.WriteFile(filepath.Join(ws, config.FileName), []byte("strict: true\n"+text), 0o644); err != nil {
		t.Fatal(err)
	}
	e = reload(t, filepath.Join(ws, config.FileName))
	r, _ = e.Sync(context.Background(), SyncOptions{})
	if !slices.Equal(r.Skills.Removed, []string{"team/Beta"}) {
		t.Errorf("under strict, removed %v, want Beta", r.Skills.Removed)
	}
}
