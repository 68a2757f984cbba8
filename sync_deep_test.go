package skillsync

import (
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
)

// TestSyncDeepSkillInReusedTree: a git tree met again at another path is
// not read twice, and a skill that lies too deep at the second path is
// reported skill-too-deep there, as a plainly deep one is: whether the
// tree first held the skill too deep as well, or within reach.
func TestSyncDeepSkillInReusedTree(t *testing.T) {
	up := gittest.NewRepo(t, "main")
	up.Skill("top", "Top.")
	up.Skill("p/t/b/c/d/deep", "Too deep.")
	up.Skill("a/near", "Within reach.")
	up.Commit("one")
	e, _ := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\ntargets: []\n")
	r := mustSync(t, e, SyncOptions{})
	if !hasRule(r, "skill-too-deep", "p/t/b/c/d/deep") || r.Sources[0].Skills != 2 {
		t.Fatalf("first sync: %+v %+v", r.Sources, r.Problems)
	}
	// The same trees again, deeper: q/t is p/t's tree, z/b/c/d/near is
	// a/near's.
	up.Skill("q/t/b/c/d/deep", "Too deep.")
	up.Skill("z/b/c/d/near", "Within reach.")
	up.Commit("two")
	r = mustSync(t, e, SyncOptions{})
	for _, p := range []string{"p/t/b/c/d/deep", "q/t/b/c/d/deep", "z/b/c/d/near"} {
		if !hasRule(r, "skill-too-deep", p) {
			t.Errorf("no skill-too-deep for %s: %+v", p, r.Problems)
		}
	}
	if hasRule(r, "dir-repeated", "z/b/c/d") || r.Sources[0].Skills != 2 {
		t.Errorf("second sync: %+v %+v", r.Sources, r.Problems)
	}
}

func hasRule(r *SyncReport, rule, path string) bool {
	for _, p := range r.Problems {
		if p.Rule == rule && p.Path == path {
			return true
		}
	}
	return false
}
