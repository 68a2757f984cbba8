package layering

import (
	"slices"
	"testing"

	"github.com/skillsync/skillsync/skill"
)

func TestDedupeKeepsTheFirstByPath(t *testing.T) {
	t.Parallel()
	paths := func(skills []skill.Skill) []string {
		var out []string
		for _, s := range skills {
			out = append(out, s.Name+"@"+s.Path)
		}
		return out
	}
	cases := []struct {
		name          string
		in            []skill.Skill
		kept, dropped []string
	}{
		{"unsorted", []skill.Skill{{Name: "PDF", Path: "z/pdf"}, {Name: "pdf", Path: "a/pdf"}, {Name: "doc", Path: "doc"}},
			[]string{"pdf@a/pdf", "doc@doc"}, []string{"PDF@z/pdf"}},
		{"sorted", []skill.Skill{{Name: "pdf", Path: "a/pdf"}, {Name: "doc", Path: "doc"}, {Name: "PDF", Path: "z/pdf"}},
			[]string{"pdf@a/pdf", "doc@doc"}, []string{"PDF@z/pdf"}},
		// The same path twice: the first given wins.
		{"same path", []skill.Skill{{Name: "b", Path: "x"}, {Name: "Pdf", Path: "p"}, {Name: "pdf", Path: "p"}, {Name: "a", Path: "b"}},
			[]string{"a@b", "Pdf@p", "b@x"}, []string{"pdf@p"}},
		{"none", nil, nil, nil},
	}
	for _, c := range cases {
		kept, dropped := Dedupe(c.in)
		if !slices.Equal(paths(kept), c.kept) || !slices.Equal(paths(dropped), c.dropped) {
			t.Errorf("%s: kept %v dropped %v, want %v and %v", c.name, paths(kept), paths(dropped), c.kept, c.dropped)
		}
	}
}
