package materialize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/skill"
)

// TestHeldSkillsKeepTheirCopy: a skill the caller could not bring
// this time (a file or folder it could not read: Held) keeps its cached
// copy and record; a skill simply gone is removed.
func TestHeldSkillsKeepTheirCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	withMeta := func(name, path string) Skill {
		s := mkSkill(name, map[string]string{"SKILL.md": "the " + name + " skill"})
		s.Meta = FromSkills([]skill.Skill{{Name: name, Description: "x", Path: path, File: "SKILL.md", Files: fstest.MapFS{}}}, false)[0].Meta
		return s
	}
	syncOnce(t, root, "r1", withMeta("kept", "skills/kept"), withMeta("also", "skills/also"), withMeta("gone", "skills/gone"))

	c := open(t, root)
	res := c.SyncSource(ctx, Source{Name: "src", Held: []string{"kept", "also", "never-cached"}})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	for _, ch := range res.Changes {
		if ch.Op != Removed {
			t.Errorf("unexpected change %+v", ch)
		}
		removed[ch.Name] = true
	}
	for name, want := range map[string]bool{"kept": false, "also": false, "gone": true} {
		if removed[name] != want {
			t.Errorf("%s removed = %v, want %v", name, removed[name], want)
		}
		_, recorded := c.Manifest().Sources["src"].Skills[name]
		data, _ := os.ReadFile(filepath.Join(root, "src", name, "SKILL.md"))
		live := string(data)
		if recorded == want || (live == "the "+name+" skill") == want {
			t.Errorf("%s: recorded %v, live %q after the sync", name, recorded, live)
		}
	}
}
