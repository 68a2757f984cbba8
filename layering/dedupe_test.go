package layering

import (
	"testing"

	"github.com/skillsync/skillsync/skill"
)

func TestDedupeKeepsTheFirstByPath(t *testing.T) {
	t.Parallel()
	kept, dropped := Dedupe([]skill.Skill{{Name: "PDF", Path: "z/pdf"}, {Name: "pdf", Path: "a/pdf"}, {Name: "doc", Path: "doc"}})
	if len(kept) != 2 || kept[0].Path != "a/pdf" || kept[1].Name != "doc" {
		t.Errorf("kept %+v", kept)
	}
	if len(dropped) != 1 || dropped[0].Path != "z/pdf" {
		t.Errorf("dropped %+v", dropped)
	}
}
