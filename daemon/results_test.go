package daemon

import (
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/curator"
)

func TestResultsOf(t *testing.T) {
	t.Parallel()
	plan := curator.Plan{Checked: 3, ArchiveHeld: "no usage yet", Changes: []curator.Change{{To: curator.Stale}, {To: curator.Stale}, {To: curator.Archived}}}
	res := CurateResultOf(plan)
	if res.Checked != 3 || res.ArchiveHeld != "no usage yet" || res.Changes["stale"] != 2 || res.Changes["archived"] != 1 || res.ChangeCount() != 3 {
		t.Errorf("CurateResultOf = %+v", res)
	}
	out := ImportResultsOf([]*agent.Report{{Agent: "claude", Files: 2, Uses: 5, Views: 1, Reactivated: []string{"pdf"}, Unreadable: []string{"x: bad"}}})
	if len(out) != 1 || out[0].Agent != "claude" || out[0].Uses != 5 || out[0].Reactivated != 1 || len(out[0].Unreadable) != 1 {
		t.Errorf("ImportResultsOf = %+v", out)
	}
	if out := ImportResultsOf(nil); out == nil || len(out) != 0 {
		t.Errorf("ImportResultsOf(nil) = %#v, want empty", out)
	}
	root := t.TempDir()
	for dir, want := range map[string]string{filepath.Join(root, ".claude", "skills"): ".claude/skills", "/elsewhere/skills": "/elsewhere/skills",
		filepath.Join(root, "..", "out"): filepath.Join(root, "..", "out")} {
		if got := TargetName(root, dir); got != want {
			t.Errorf("TargetName(%s) = %q, want %q", dir, got, want)
		}
	}
}
