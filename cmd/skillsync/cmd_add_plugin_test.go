package main

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestAddPlugin (issue 24): add --plugin NAME takes one plugin group of
// the source's .claude-plugin/marketplace.json, keeps to it in plugins:
// so later syncs take that plugin's new skills and nothing else, grows
// plugins: on a second --plugin, and refuses a plugin the marketplace
// lacks, naming the ones it has.
func TestAddPlugin(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Write(".claude-plugin/marketplace.json", `{"name": "acme", "plugins": [
  {"name": "docs", "source": "./plugins/docs"},
  {"name": "dev", "source": "./plugins/dev", "skills": ["./tools"]}
]}`, 0o644)
	up.Skill("plugins/docs/skills/pdf", "Fill in PDF forms.")
	up.Skill("plugins/docs/skills/docx", "Edit Word documents.")
	up.Skill("plugins/dev/tools/lint", "Lint the code.")
	up.Skill("skills/loose", "Not in any plugin.")
	up.Commit("one")
	url := up.URL()
	ws := t.TempDir()
	cached := func(want ...string) {
		t.Helper()
		for _, name := range []string{"pdf", "docx", "lint", "loose", "new"} {
			has := fileExists(filepath.Join(ws, ".skills-cache", "team", name, "SKILL.md"))
			if wanted := slices.Contains(want, name); has != wanted {
				t.Errorf("cache holds %s: %v, want %v", name, has, wanted)
			}
		}
	}

	r := run(t, ws, "add", url, "--name", "team", "--plugin", "docs", "--agent", "none")
	if r.code != 0 {
		t.Fatalf("add --plugin docs: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cached("pdf", "docx")
	cfg, err := config.Load(filepath.Join(ws, "skillsync.yaml"), skillsync.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Sources[len(cfg.Sources)-1]; !reflect.DeepEqual(s.Plugins, []string{"docs"}) || len(s.Skills) != 0 {
		t.Fatalf("source %s: plugins %v, skills %v", s.Name, s.Plugins, s.Skills)
	}

	// The plugin grows upstream: a sync takes its new skill, and still
	// nothing from outside it.
	up.Skill("plugins/docs/skills/new", "A new document skill.")
	up.Commit("two")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cached("pdf", "docx", "new")

	r = run(t, ws, "add", url, "--name", "team", "--plugin", "dev")
	if r.code != 0 || !strings.Contains(r.stdout, "its plugins: now takes dev too") {
		t.Fatalf("add --plugin dev: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cached("pdf", "docx", "new", "lint")

	other := t.TempDir()
	r = run(t, other, "add", url, "--plugin", "nope", "--agent", "none")
	if r.code != 2 || !strings.Contains(r.stderr, `"nope" is not a plugin of this source; it has: dev, docs`) {
		t.Errorf("add --plugin nope: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if fileExists(filepath.Join(other, "skillsync.yaml")) && strings.Contains(skilltest.ReadFile(t, filepath.Join(other, "skillsync.yaml")), "nope") {
		t.Error("an unknown plugin was written into the config")
	}
}
