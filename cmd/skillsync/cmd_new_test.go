package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/skill"
)

func TestNewScaffoldsAValidSkill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := run(t, dir, "new", "release-notes")
	file := filepath.Join(dir, "skills", "release-notes", "SKILL.md")
	if r.code != 0 || !strings.Contains(r.stdout, "wrote "+file) {
		t.Fatalf("new: %d %s %s", r.code, r.stdout, r.stderr)
	}
	text := skilltest.ReadFile(t, file)
	for _, want := range []string{"---\nname: release-notes\ndescription: ", "## Instructions", "## Examples", "## Edge cases"} {
		if !strings.Contains(text, want) {
			t.Errorf("SKILL.md lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(r.stdout, "replace its description") {
		t.Errorf("new gave no reminder to write the description: %s", r.stdout)
	}
	// The placeholder description is a warning that names the file, and
	// an error under --strict, until it is replaced: an agent reads the
	// description alone to decide whether to load the skill.
	rel := filepath.Join("skills", "release-notes")
	placeholder := filepath.Join(rel, "SKILL.md") + ":3: %s: description in SKILL.md is still the placeholder skillsync new wrote: write in its place what the skill does and when to use it (description-placeholder)\n"
	if r := run(t, dir, "validate", rel); r.code != 0 || r.stdout != fmt.Sprintf(placeholder, "warning") {
		t.Errorf("validate of the new skill: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, dir, "validate", "--strict", rel); r.code != 1 || r.stdout != fmt.Sprintf(placeholder, "error") {
		t.Errorf("validate --strict of the new skill: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(text, skill.PlaceholderDescription, "Write release notes from merged pull requests. Use when a release is cut.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, dir, "validate", "--strict", rel); r.code != 0 || r.stdout != "" {
		t.Errorf("validate --strict once the description is written: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// Never overwritten.
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, dir, "new", "release-notes"); r.code != 1 || !strings.Contains(r.stderr, "already exists") || skilltest.ReadFile(t, file) != "mine" {
		t.Errorf("new over an existing skill: %d %s", r.code, r.stderr)
	}

	// A description that needs quoting, a DIR of its own, --json.
	r = run(t, dir, "new", "pdf-forms", "team", "--description", "Fill in PDF forms: use when a form must be completed.", "--json")
	out := decode[struct{ Name, Path string }](t, r)
	if r.code != 0 || out.Path != filepath.Join("team", "pdf-forms", "SKILL.md") {
		t.Fatalf("new --json: %d %+v %s", r.code, out, r.stderr)
	}
	if r := run(t, dir, "validate", "--strict", "team"); r.code != 0 {
		t.Errorf("validate --strict team: %d %s", r.code, r.stdout)
	}

	for _, bad := range []string{"Release", "a--b", "-a", "a_b", "../x", ".hidden", strings.Repeat("a", 65)} {
		if r := run(t, dir, "new", bad); r.code != 2 {
			t.Errorf("new %q: exit %d %s, want 2", bad, r.code, r.stderr)
		}
	}
	if r := run(t, dir, "new", "x", "--description", "two\nlines"); r.code != 2 {
		t.Errorf("a two-line description: %d", r.code)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "skills")); len(entries) != 1 {
		t.Errorf("a refused name left something behind: %v", entries)
	}
}

func TestAgentsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := home(t)
	for _, p := range []string{".claude", ".cursor/skills", ".config/opencode"} {
		if err := os.MkdirAll(filepath.Join(h, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, dir, "agents", "--json")
	type agentRow struct {
		Name    string
		Display string `json:"display_name"`
		Project string `json:"project_dir"`
		User    string
		UserDir string `json:"user_dir"`
		Found   bool
		Aliases []string
	}
	list := decode[[]agentRow](t, r)
	found := map[string]bool{}
	byName := map[string]agentRow{}
	for _, a := range list {
		found[a.Name] = a.Found
		byName[a.Name] = a
	}
	if len(list) != len(agent.Agents()) || !found["claude-code"] || !found["cursor"] || !found["opencode"] || found["codex"] || found["windsurf"] {
		t.Errorf("found = %v", found)
	}
	if c := byName["claude-code"]; c.User != "~/.claude/skills" || c.UserDir != filepath.Join(h, ".claude", "skills") || c.Project != ".claude/skills" || c.Aliases[0] != "claude" {
		t.Errorf("claude-code = %+v", c)
	}
	human := run(t, dir, "agents")
	if human.code != 0 || !strings.Contains(human.stdout, "claude-code (claude)") || !strings.Contains(human.stderr, "3 found on this machine") {
		t.Errorf("agents:\n%s%s", human.stdout, human.stderr)
	}
}

func TestInitAgents(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	r := run(t, ws, "init", "--agent", "*", "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "agent openclaw reads skills/") {
		t.Fatalf("init --agent '*': %d %s", r.code, r.stderr)
	}
	out := decode[struct{ Targets []string }](t, r)
	cfg, err := config.Load(filepath.Join(ws, "skillsync.yaml"), skillsync.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Targets)+len(cfg.AgentsMD) != len(out.Targets) || len(out.Targets) < 30 || !slices.Contains(out.Targets, "AGENTS.md") {
		t.Errorf("%d targets and %d agents_md in the config, %d reported: %v", len(cfg.Targets), len(cfg.AgentsMD), len(out.Targets), out.Targets)
	}
	if r := run(t, ws, "init", "--agent", "codex", "--agent", "gemini"); r.code != 0 || !strings.Contains(r.stdout, "the targets were already there") {
		t.Errorf("init --agent for targets already there: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "init", "--agent", "openclaw"); r.code != 2 || !strings.Contains(r.stderr, "workspace layer") {
		t.Errorf("openclaw's project folder: %d %s", r.code, r.stderr)
	}

	// aider reads only AGENTS.md: init adds an agents_md: target, and
	// the next sync writes the list of skills into the file.
	ws = t.TempDir()
	if r := run(t, ws, "init", "--agent", "aider"); r.code != 0 || !strings.Contains(r.stdout, "added target AGENTS.md (aider)") {
		t.Fatalf("init --agent aider: %d %s %s", r.code, r.stdout, r.stderr)
	}
	text := skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml"))
	if !strings.Contains(text, "  - agents_md: AGENTS.md\n") {
		t.Errorf("the config lacks the agents_md target:\n%s", text)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), strings.Replace(text, "  # - embedded: builtin\n", "  - embedded: builtin\n", 1))
	if r := run(t, ws, "sync"); r.code != 0 || !strings.Contains(skilltest.ReadFile(t, filepath.Join(ws, "AGENTS.md")), "<name>\nskillsync\n</name>") {
		t.Errorf("sync into AGENTS.md: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "init", "--agent", "aider", "--global"); r.code != 2 || !strings.Contains(r.stderr, "AGENTS.md") {
		t.Errorf("init --agent aider --global: %d %s", r.code, r.stderr)
	}

	// --global: the user-wide config, its target the user folder, ~ in
	// the config, expanded by sync.
	ws = t.TempDir()
	if r := run(t, ws, "init", "-a", "claude", "--global"); r.code != 0 || !strings.Contains(r.stdout, "added target ~/.claude/skills (claude-code)") {
		t.Fatalf("init --global: %d %s %s", r.code, r.stdout, r.stderr)
	}
	global := filepath.Join(home(t), ".config", "skillsync", "skillsync.yaml")
	text = skilltest.ReadFile(t, global)
	if !strings.Contains(text, "  - dir: ~/.claude/skills\n") {
		t.Error("the config lacks ~/.claude/skills")
	}
	skilltest.WriteFile(t, global, strings.Replace(text, "  # - embedded: builtin\n", "  - embedded: builtin\n", 1))
	if r := run(t, ws, "-g", "sync"); r.code != 0 || !fileExists(filepath.Join(home(t), ".claude", "skills", "skillsync", "SKILL.md")) {
		t.Errorf("sync into the user folder: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "init", "--global"); r.code != 0 || !strings.Contains(r.stdout, "is there already, left as it is") {
		t.Errorf("--global again: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// A new skill of the workspace layer that takes a source's skill's name
// replaces it in the agents' folders from the next sync on: new says so.
func TestNewSaysWhatItShadows(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	r := run(t, ws, "new", "release-notes")
	if r.code != 0 || !strings.Contains(r.stderr, "release-notes of team (marketplace) is shadowed by the new skill") {
		t.Errorf("new over a source's skill: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "new", "fresh-name"); r.code != 0 || strings.Contains(r.stderr, "shadowed") {
		t.Errorf("new of a name no source has: %d %s", r.code, r.stderr)
	}
}
