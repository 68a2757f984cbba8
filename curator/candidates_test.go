package curator

import (
	"testing"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

func TestCandidatesOf(t *testing.T) {
	t.Parallel()
	winners := []*layering.Winner{
		{Entry: layering.Entry{Skill: skill.Skill{Name: "pdf"}, Layer: layering.Marketplace, Source: "team", Dir: "/cache/team/pdf"}},
		{Entry: layering.Entry{Skill: skill.Skill{Name: "notes"}, Layer: layering.Workspace, Dir: "/ws/skills/team/notes"}},
		{Entry: layering.Entry{Skill: skill.Skill{Name: "../escape"}, Layer: layering.Workspace}},
	}
	copyOf := func(en *layering.Entry) (Copy, bool) {
		c, err := NewCopy(en.Layer, en.Source, en.Skill.Name)
		return c, err == nil
	}
	got := CandidatesOf(winners, copyOf, []LayerDir{{Layer: layering.Workspace, Dir: "/ws/skills"}})
	if len(got) != 2 {
		t.Fatalf("candidates %+v, want the two nameable copies", got)
	}
	if got[0].Copy.Owner != "team" || got[0].Dir != "" || got[0].LayerDir != "" {
		t.Errorf("a marketplace copy is only marked, never moved: %+v", got[0])
	}
	if got[1].Dir != "/ws/skills/team/notes" || got[1].LayerDir != "/ws/skills" {
		t.Errorf("a local copy: %+v", got[1])
	}
}
