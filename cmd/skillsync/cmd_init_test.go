package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestNoWorkspaceInTheHomeFolder: in the home folder, with no config,
// sync, init and add refuse (exit 2) and write nothing there: a starter
// config left behind would fail every command below it.
func TestNoWorkspaceInTheHomeFolder(t *testing.T) {
	t.Parallel()
	h := t.TempDir()
	writeTree(t, h, map[string]string{"team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n", ".claude/settings.json": "{}\n"})
	env := []string{"HOME=" + h, "XDG_CONFIG_HOME=" + filepath.Join(h, ".config"), "XDG_CACHE_HOME=" + filepath.Join(h, ".cache")}
	for _, args := range [][]string{{"sync"}, {"init", "--agent", "claude"}, {"init"}, {"add", "./team"}} {
		r := runEnv(t, h, env, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "is the home directory") {
			t.Errorf("%v in the home folder: %d %s", args, r.code, r.stderr)
		}
		// Refused first: no advice naming a command refused the same way.
		if strings.Contains(r.stderr, "Add their folders with") {
			t.Errorf("%v in the home folder advised before refusing: %s", args, r.stderr)
		}
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.Name() != "team" && e.Name() != ".config" && e.Name() != ".cache" && e.Name() != ".claude" {
				t.Errorf("%v in the home folder wrote %s", args, e.Name())
			}
		}
	}
	if r := runEnv(t, h, env, "-g", "init"); r.code != 0 {
		t.Errorf("init -g in the home folder: %d %s", r.code, r.stderr)
	}
}

// TestStarterBelowAWorkspaceWarns: init in a project's subfolder writes
// a second workspace there, and says so, naming the config above (add
// there refuses: TestNoSecondWorkspaceInASubfolder).
func TestStarterBelowAWorkspaceWarns(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	writeTree(t, proj, map[string]string{"skillsync.yaml": "targets: []\n", "team/a/SKILL.md": "---\nname: a\ndescription: The a skill.\n---\nBody.\n"})
	for _, args := range [][]string{{"init", "--agent", "none"}} {
		sub := filepath.Join(proj, "src", args[0])
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if r := run(t, sub, args...); !strings.Contains(r.stderr, filepath.Join(proj, "skillsync.yaml")+" is in a folder above") {
			t.Errorf("%v in a subfolder: %d %s", args, r.code, r.stderr)
		}
	}
}

// TestInitWithNoAgentFoundAdvisesWhatWorks: init with no --agent on a
// machine with no agent says how to add one, and the command it names
// adds a target to the config just written, rather than replace it.
func TestInitWithNoAgentFoundAdvisesWhatWorks(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	r := run(t, proj, "init")
	if r.code != 0 || !strings.Contains(r.stderr, "Add one with skillsync init --agent NAME") {
		t.Fatalf("init with no agent found: %d %s", r.code, r.stderr)
	}
	if r := run(t, proj, "init", "--agent", "claude-code"); r.code != 0 {
		t.Fatalf("the advised command: %d %s", r.code, r.stderr)
	}
	if cfg := skilltest.ReadFile(t, filepath.Join(proj, "skillsync.yaml")); !strings.Contains(cfg, ".claude/skills") {
		t.Errorf("the config after the advised command:\n%s", cfg)
	}
}

// TestNoWorkspaceInAnAgentsFolder: with no config, sync in the folder an
// agent reads skills from refuses (exit 2) and writes nothing there: the
// cache, lock and skills/ it would write would sit among the skills.
func TestNoWorkspaceInAnAgentsFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".claude", "skills")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, "sync")
	if r.code != 2 || !strings.Contains(r.stderr, "is the folder Claude Code reads skills from (.claude/skills)") {
		t.Errorf("sync in .claude/skills: %d %s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("sync wrote %d entries into the agent's folder", len(entries))
	}
}

// TestInitForceKeepsTheConfigItReplaces: init --force writes the starter
// config over an edited one, which it keeps first in skillsync.yaml.bak
// and names; over the starter itself it keeps nothing. Before, the edited
// config was gone without a word.
func TestInitForceKeepsTheConfigItReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := run(t, dir, "init", "--agent", "none"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	path := filepath.Join(dir, "skillsync.yaml")
	edited := "# mine\nrepositories:\n  - embedded: builtin\n"
	skilltest.WriteFile(t, path, edited)
	r := run(t, dir, "init", "--force", "--agent", "none")
	if r.code != 0 || !strings.Contains(r.stdout, "the one it replaced is in skillsync.yaml.bak") {
		t.Fatalf("init --force: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if got := skilltest.ReadFile(t, path+".bak"); got != edited {
		t.Errorf("skillsync.yaml.bak holds %q, want the edited config", got)
	}
	if got := skilltest.ReadFile(t, path); got == edited {
		t.Error("the starter was not written")
	}
	// Again: what it replaces is the starter, kept nowhere, and the
	// edited one stays in the .bak.
	if r := run(t, dir, "init", "--force", "--agent", "none"); r.code != 0 || strings.Contains(r.stdout, "replaced") {
		t.Errorf("init --force over the starter: %d %s", r.code, r.stdout)
	}
	if got := skilltest.ReadFile(t, path+".bak"); got != edited {
		t.Errorf("skillsync.yaml.bak holds %q after a second --force", got)
	}
}
