package agent

import (
	"os"
	"path/filepath"
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
