package repository_test

import (
	"context"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
)

// TestDiscoveryNeverLoadsDrafts: a _drafts folder is not entered by the
// walk, nor made a root by a plugin manifest that declares it.
func TestDiscoveryNeverLoadsDrafts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	skilltest.Write(t, dir, map[string]string{
		".claude-plugin/plugin.json": `{"name": "p", "skills": ["./_drafts/idea", "./team"]}`,
		"_drafts/idea/SKILL.md":      "---\nname: idea\ndescription: A draft.\n---\n",
		"team/kept/SKILL.md":         "---\nname: kept\ndescription: A skill.\n---\n",
	})
	skills, _, err := dirsource.NewLocal("src", dir, repository.Options{}).Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) != 1 || skills[0].Name != "kept" {
		var names []string
		for _, s := range skills {
			names = append(names, s.Name+"@"+s.Path)
		}
		t.Errorf("skills = %v, want kept only", names)
	}
}
