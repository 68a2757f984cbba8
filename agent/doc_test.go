package agent

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestAgentsDoc keeps docs/agents.md what the table says.
// SKILLSYNC_UPDATE_DOCS=1 rewrites it.
func TestAgentsDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "agents.md")
	want := Markdown()
	if os.Getenv("SKILLSYNC_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not what the agent table says; run SKILLSYNC_UPDATE_DOCS=1 go test ./agent -run TestAgentsDoc", path)
	}
	for _, row := range []string{
		"| Claude Code | `claude-code`, `claude` | `.claude/skills` | `~/.claude/skills` | `%USERPROFILE%\\.claude\\skills` | `CLAUDE_CONFIG_DIR` |",
		"| Goose | `goose` | `.goose/skills` | `$XDG_CONFIG_HOME/goose/skills` | `%APPDATA%\\Block\\goose\\config\\skills` |  |",
		"| Aider | `aider` | `AGENTS.md` (agents_md) | none | none |  |",
		"| OpenCode | `opencode` | `.opencode/skills` | `$XDG_CONFIG_HOME/opencode/skills` | `%USERPROFILE%\\.config\\opencode\\skills` |  |",
	} {
		if !strings.Contains(want, row+"\n") {
			t.Errorf("the page lacks the row\n%s", row)
		}
	}
	if n := strings.Count(want, "\n| ") - 1; n != len(Agents()) {
		t.Errorf("%d rows for %d agents", n, len(Agents()))
	}
}

// TestReadmeCountsTheAgents keeps the README's count of agents what the
// table holds: the agents that read a skills folder, three of them
// named, and all of them, as skillsync agents lists them (Aider, which
// reads AGENTS.md, among them). It said 40 other agents when the table
// had 42.
func TestReadmeCountsTheAgents(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	m := regexp.MustCompile("the folders Claude Code, Codex, OpenCode and ([0-9]+) other agents read \\(`skillsync agents` lists all ([0-9]+)\\)").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("README.md no longer says which agents read the skills; keep this test in step with it")
	}
	folders := 0
	for _, a := range Agents() {
		if a.Project != "" {
			folders++
		}
	}
	for _, name := range []string{"claude-code", "codex", "opencode"} {
		if a, ok := Lookup(name); !ok || a.Project == "" {
			t.Errorf("README.md names %s, which the table has not as an agent that reads a folder", name)
		}
	}
	if want := strconv.Itoa(folders - 3); m[1] != want {
		t.Errorf("README.md says %s other agents read the folders; the table has %s", m[1], want)
	}
	if want := strconv.Itoa(len(Agents())); m[2] != want {
		t.Errorf("README.md says skillsync agents lists %s; the table has %s", m[2], want)
	}
}
