package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/all"
)

// TestAddRepositoryTakesASkillOutOfExclude: remove --skill of a source
// that takes every skill writes the name into its exclude:; an add of
// that skill must take it out again, or the skill never comes back.
func TestAddRepositoryTakesASkillOutOfExclude(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, have string // the entry's lines after its git:
		skills     []string
		want       string // the entry's lines after the add
		added      []string
		included   []string
	}{
		{"the last excluded", "    exclude: [pdf]\n", []string{"pdf"}, "", nil, []string{"pdf"}},
		{"one of two", "    exclude: [pdf, docx]\n", []string{"docx"}, "    exclude: [pdf]\n", nil, []string{"docx"}},
		{"in another case", "    exclude: [PDF]\n", []string{"pdf"}, "", nil, []string{"PDF"}},
		{"a block list", "    exclude:\n      - pdf\n      - docx\n    ref: v1\n", []string{"pdf"}, "    exclude: [docx]\n    ref: v1\n", nil, []string{"pdf"}},
		{"and into skills:", "    skills: [docx]\n    exclude: [pdf]\n", []string{"pdf"}, "    skills: [docx, pdf]\n", []string{"pdf"}, []string{"pdf"}},
		{"exclude: above a block skills:", "    exclude: [pdf]\n    skills:\n      - docx\n", []string{"pdf"}, "    skills: [docx, pdf]\n", []string{"pdf"}, []string{"pdf"}},
		{"a block skills: above exclude:", "    skills:\n      - docx\n    exclude: [pdf]\n", []string{"pdf"}, "    skills: [docx, pdf]\n", []string{"pdf"}, []string{"pdf"}},
		{"a glob stays", "    exclude: [pdf-*]\n", []string{"pdf-fill"}, "    exclude: [pdf-*]\n", nil, nil},
		{"not excluded", "    exclude: [docx]\n", []string{"pdf"}, "    exclude: [docx]\n", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			head := "repositories:\n  - name: team\n    git: https://github.com/acme/skills\n"
			ref := ""
			if strings.Contains(tt.have, "ref: v1") {
				ref = "v1"
			}
			path := writeConfig(t, head+tt.have)
			res, err := AddRepository(hostenv.Env{}, path, Entry{Git: "https://github.com/acme/skills", Ref: ref, Skills: tt.skills}, all.Kinds())
			if err != nil {
				t.Fatal(err)
			}
			if res.Added || res.Source != "team" || !slices.Equal(res.Skills, tt.added) || !slices.Equal(res.Included, tt.included) {
				t.Errorf("result %+v; want skills %q, included %q", res, tt.added, tt.included)
			}
			if got := skilltest.ReadFile(t, path); got != head+tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, head+tt.want)
			}
			if s := res.Config.Sources[0]; len(tt.included) > 0 && slices.ContainsFunc(s.Exclude, func(x string) bool { return strings.EqualFold(x, tt.skills[0]) }) {
				t.Errorf("the config loads with exclude: %q", s.Exclude)
			}
		})
	}
}
