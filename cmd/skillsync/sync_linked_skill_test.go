package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestSyncOfASkillLinkedOutOfTheSource: a SKILL.md that is a symbolic
// link leading out of the source is the source's own content, as
// docs/sync.md says of such links: a skill the cache never had is a
// problem of that skill (skill-md-link, naming the file and the fix),
// and the source stays whole (exit 0), at every sync; a skill the cache
// has whose SKILL.md becomes such a link is a cached skill whose new
// version is invalid: it keeps its last good copy and the source is
// partial (exit 3). Both for a local folder and for a git repository.
func TestSyncOfASkillLinkedOutOfTheSource(t *testing.T) {
	t.Parallel()
	type source struct {
		config string
		link   func(skill string) // makes skill's SKILL.md a link out of the source
	}
	for _, kind := range []string{"dir", "git"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			outside := filepath.Join(ws, "outside")
			skilltest.Skill(t, outside, "bad", "Outside the source.", nil)
			skilltest.Skill(t, outside, "docx", "Outside the source.", nil)
			var s source
			switch kind {
			case "dir":
				src := filepath.Join(ws, "src")
				skilltest.Skill(t, src, "pdf", "Read PDFs.", nil)
				skilltest.Skill(t, src, "docx", "Read docx.", nil)
				s.config = "    dir: src\n"
				s.link = func(skill string) {
					p := filepath.Join(src, skill, "SKILL.md")
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
					if err := os.Symlink(filepath.Join("..", "..", "outside", skill, "SKILL.md"), p); err != nil {
						t.Fatal(err)
					}
				}
			case "git":
				up := gittest.NewRepo(t, "main")
				up.Skill("pdf", "Read PDFs.")
				up.Skill("docx", "Read docx.")
				up.Commit("one")
				s.config = "    git: " + up.URL() + "\n"
				s.link = func(skill string) {
					up.Remove(skill + "/SKILL.md")
					up.Symlink("../../outside/"+skill+"/SKILL.md", skill+"/SKILL.md")
					up.Commit("link " + skill)
				}
			}
			skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "targets:\n  - dir: out\nrepositories:\n  - name: team\n"+s.config)
			if r := run(t, ws, "sync"); r.code != 0 {
				t.Fatalf("first sync: %d %s", r.code, r.stderr)
			}
			s.link("bad")
			for i, when := range []string{"first sync", "second sync"} {
				r := run(t, ws, "sync", "--json")
				js := decode[syncJSON](t, r)
				if r.code != 0 || js.Sources[0].Status == "partial" || len(js.Outcomes) != 0 {
					t.Errorf("%s of a new skill linked out: exit %d, %+v, outcomes %v", when, r.code, js.Sources, js.Outcomes)
				}
				// The second, with nothing new, does not read the source.
				if i == 0 && !slices.ContainsFunc(js.Problems, func(p struct{ Source, Skill, Path, Level, Rule, Message string }) bool {
					return p.Rule == "skill-md-link" && p.Path == "bad/SKILL.md" && strings.Contains(p.Message, "outside the source")
				}) {
					t.Errorf("%s: no skill-md-link problem at bad/SKILL.md: %+v", when, js.Problems)
				}
			}
			if _, err := os.Lstat(filepath.Join(ws, "out", "bad")); !os.IsNotExist(err) {
				t.Errorf("the skill linked out was placed: %v", err)
			}

			s.link("docx")
			r := run(t, ws, "sync")
			if r.code != 3 || !strings.Contains(r.stderr, "docx") {
				t.Errorf("a cached skill linked out: exit %d\n%s", r.code, r.stderr)
			}
			if data, err := os.ReadFile(filepath.Join(ws, "out", "docx", "SKILL.md")); err != nil || !strings.Contains(string(data), "Read docx.") {
				t.Errorf("docx lost its last good copy: %v %s", err, data)
			}
		})
	}
}
