package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/all"
)

// TestTargetThroughALink: a target reached through a link outside the
// workspace that leads back into it is checked where the link leads: into
// the workspace layer, or the cache, it is refused.
func TestTargetThroughALink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "mine", "SKILL.md"), "---\nname: mine\ndescription: Mine.\n---\n")
	if err := os.Symlink(ws, filepath.Join(root, "wslink")); err != nil {
		t.Fatal(err)
	}
	env := hostenv.New(ws, []string{"HOME=" + root})
	for dir, want := range map[string]string{
		"../wslink/skills":        "is the workspace layer or inside it (as the links on its path lead, to " + filepath.Join(ws, "skills") + ")",
		"../wslink/.skills-cache": "is the cache or inside it",
		"../wslink":               "is the workspace (as the links on its path lead",
	} {
		path := filepath.Join(ws, FileName)
		skilltest.WriteFile(t, path, "targets:\n  - dir: "+dir+"\n")
		_, err := LoadIn(env, path, all.Kinds())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("target %s: %v, want %q", dir, err, want)
		}
	}
}
