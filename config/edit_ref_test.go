package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/all"
)

// TestAddRepositoryAtAnotherRef: add owner/repo@ref of a repository the
// config reads at another ref wrote a second entry with a derived name,
// which cached every skill twice, one copy shadowing the other. It is
// refused, naming the entry there, its line and the fix, unless a name
// is given or the two select apart.
func TestAddRepositoryAtAnotherRef(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, have string // the entry's lines after its git:
		add        Entry
		want       string // in the error; "" when a second entry is added
	}{
		{"pin one without a ref", "", Entry{Ref: "main"}, "source team is already there without a ref; to pin it, set ref: main on that entry in FILE:2, or skillsync remove team first"},
		{"move a pinned one", "    ref: v1\n", Entry{Ref: "v2"}, "source team is already there at ref v1; to move it, set ref: v2 on that entry in FILE:2"},
		{"unpin a pinned one", "    ref: v1\n", Entry{}, "source team is already there at ref v1; to follow the default branch, take ref: out of that entry in FILE:2"},
		{"the same path spelt otherwise", "    path: skills/\n", Entry{Ref: "v1", Path: "/skills"}, "set ref: v1 on that entry"},
		{"a selection that overlaps", "    skills: [pdf, docx]\n", Entry{Ref: "v1", Skills: []string{"pdf"}}, "without a ref"},
		{"a name given", "", Entry{Name: "team-v1", Ref: "v1"}, ""},
		{"another path", "", Entry{Ref: "v1", Path: "skills/pdf"}, ""},
		{"skills apart", "    skills: [docx]\n", Entry{Ref: "v1", Skills: []string{"pdf"}}, ""},
		{"plugins apart", "    plugins: [a]\n", Entry{Ref: "v1", Plugins: []string{"b"}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, "repositories:\n  - name: team\n    git: https://github.com/acme/skills\n"+tt.have)
			before := skilltest.ReadFile(t, path)
			tt.add.Git = "git@github.com:acme/skills.git"
			res, err := AddRepository(hostenv.Env{}, path, tt.add, all.Kinds())
			if tt.want == "" {
				if err != nil || !res.Added {
					t.Fatalf("want a second entry: %+v, %v", res, err)
				}
				return
			}
			var ae *ArgError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), strings.ReplaceAll(tt.want, "FILE", path)) {
				t.Errorf("err = %v\nwant an ArgError holding %q", err, tt.want)
			}
			if got := skilltest.ReadFile(t, path); got != before {
				t.Errorf("the config changed:\n%s", got)
			}
		})
	}
}
