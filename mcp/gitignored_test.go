package mcp

import (
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/mcptest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestMCPReadLeavesOutGitIgnored: read_skill_file does not serve a
// workspace skill's file that git ignores (the author's .env), which a
// sync leaves out of every target; before, any client that named it got
// the secret. A file git does not ignore is served.
func TestMCPReadLeavesOutGitIgnored(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, "main")
	repo.Write(".gitignore", ".env\n", 0)
	ws := newDirWorkspace(t)
	ws.dir = filepath.Join(repo.Dir, "skills")
	writeSkill(t, ws.dir, "tool", "A tool with a secret beside it", "# Tool\n", map[string]string{".env": "API_KEY=sk-live-123\n", "notes.md": "notes\n"})
	home := t.TempDir()
	cs := connect(t, newServer(t, ws, Options{Env: hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})}))
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "tool", "path": ".env"}, nil), ".env")
	var file readOutput
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "tool", "path": "notes.md"}, &file)
	if file.Text != "notes\n" {
		t.Errorf("notes.md read as %q", file.Text)
	}
}

// TestMCPReadLeavesOutOwnGitignored: a workspace's skills/ outside any
// git work tree is served without what its own .gitignore leaves out,
// the one at its root included, as a sync of it leaves that out of the
// targets; before, read_skill_file served the .env of a skill because the
// rule sat in the layer's folder rather than the skill's.
func TestMCPReadLeavesOutOwnGitignored(t *testing.T) {
	t.Parallel()
	ws := newDirWorkspace(t)
	writeSkill(t, ws.dir, "tool", "A tool with a secret beside it", "# Tool\n", map[string]string{".env": "API_KEY=sk-live-123\n", "notes.md": "notes\n"})
	skilltest.WriteFile(t, filepath.Join(ws.dir, ".gitignore"), ".env\n")
	home := t.TempDir()
	cs := connect(t, newServer(t, ws, Options{Env: hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})}))
	mcptest.ToolError(t, mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "tool", "path": ".env"}, nil), ".env")
	var file readOutput
	mcptest.Call(t, cs, "read_skill_file", map[string]any{"name": "tool", "path": "notes.md"}, &file)
	if file.Text != "notes\n" {
		t.Errorf("notes.md read as %q", file.Text)
	}
}
