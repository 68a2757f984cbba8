package config

import (
	"slices"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/all"
)

// TestAddRepositoryCaseOfTheRemote: a remote spelt with other capitals
// is the repository already there where the spellings reach the same
// one: the host's case never matters, and the path's does not on the
// hosting services that ignore it. add then names the source there and
// writes no second one, which would materialize the same skills twice.
// A self-hosted server's paths may be case-sensitive: there they are
// two repositories.
func TestAddRepositoryCaseOfTheRemote(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, have string // have: the entry in the config
		add        Entry
		added      bool     // a second entry is written
		skills     []string // the names added to the entry there
	}{
		{"github owner and repo", "git: https://github.com/acme/skills", Entry{Git: "https://github.com/Acme/Skills"}, false, nil},
		{"github host", "git: https://github.com/acme/skills", Entry{Git: "https://GitHub.COM/acme/skills.git"}, false, nil},
		{"github ssh", "git: https://github.com/acme/skills", Entry{Git: "git@github.com:ACME/Skills.git"}, false, nil},
		{"github, configured in capitals", "git: https://github.com/Acme/Skills.git", Entry{Git: "https://github.com/acme/skills"}, false, nil},
		{"github .GIT", "git: https://github.com/acme/skills", Entry{Git: "https://github.com/acme/skills.GIT"}, false, nil},
		{"gitlab group", "git: https://gitlab.com/group/sub/proj", Entry{Git: "https://gitlab.com/Group/Sub/Proj.git"}, false, nil},
		{"bitbucket", "git: git@bitbucket.org:team/skills.git", Entry{Git: "https://bitbucket.org/Team/Skills"}, false, nil},
		{"skills join the entry there", "git: https://github.com/acme/skills\n    skills: [docx]", Entry{Git: "https://github.com/Acme/Skills", Skills: []string{"pdf"}}, false, []string{"pdf"}},
		{"self-hosted host", "git: https://git.example.com/acme/skills", Entry{Git: "https://GIT.Example.com/acme/skills"}, false, nil},
		{"self-hosted path", "git: https://git.example.com/acme/skills", Entry{Git: "https://git.example.com/Acme/Skills"}, true, nil},
		{"another ref", "git: https://github.com/acme/skills", Entry{Name: "v2", Git: "https://github.com/Acme/Skills", Ref: "v2"}, true, nil},
		{"the folder inside keeps its case", "git: https://github.com/acme/skills\n    path: Skills", Entry{Git: "https://github.com/Acme/Skills", Path: "skills"}, true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, "repositories:\n  - name: team\n    "+tt.have+"\n")
			before := skilltest.ReadFile(t, path)
			res, err := AddRepository(hostenv.Env{}, path, tt.add, all.Kinds())
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != tt.added || len(res.Config.Sources) != 1+btoi(tt.added) {
				t.Fatalf("added %v, sources %d; want added %v:\n%s", res.Added, len(res.Config.Sources), tt.added, skilltest.ReadFile(t, path))
			}
			if tt.added {
				return
			}
			if res.Source != "team" || !slices.Equal(res.Skills, tt.skills) {
				t.Errorf("result %+v: want source team, skills %q", res, tt.skills)
			}
			if tt.skills == nil && skilltest.ReadFile(t, path) != before {
				t.Errorf("the config changed:\n%s", skilltest.ReadFile(t, path))
			}
			// remove finds the source by the same spelling.
			if found := res.Config.Match(tt.add, false); !slices.Equal(found, []int{0}) {
				t.Errorf("Match(%+v) = %v, want [0]", tt.add, found)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
