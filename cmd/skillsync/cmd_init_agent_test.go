package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitHooksAndMCP: init --agent claude --hooks --mcp merges skillsync's
// hook and server into the user's Claude Code settings, keeps the rest, and
// a second run adds nothing.
func TestInitHooksAndMCP(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := `{"permissions":{"allow":["Bash(ls)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"mine"}]}]}}`
	if err := os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if r := run(t, ws, "init", "--agent", "claude", "--hooks", "--mcp"); r.code != 0 {
			t.Fatalf("init --hooks --mcp (run %d): %d %s", i+1, r.code, r.stderr)
		}
	}
	data, err := os.ReadFile(filepath.Join(ws, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		Permissions map[string][]string
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatalf("settings.json: %v\n%s", err, data)
	}
	if len(settings.Permissions["allow"]) != 1 || len(settings.Hooks["PreToolUse"]) != 1 {
		t.Errorf("the user's settings were not kept:\n%s", data)
	}
	if post := settings.Hooks["PostToolUse"]; len(post) != 1 || !strings.Contains(post[0].Hooks[0].Command, "skillsync use --hook claude") {
		t.Errorf("PostToolUse after two runs: %+v", post)
	}
	mcp, err := os.ReadFile(filepath.Join(ws, ".mcp.json"))
	if err != nil || !strings.Contains(string(mcp), `"skillsync"`) || !strings.Contains(string(mcp), `"mcp"`) {
		t.Errorf(".mcp.json: %v %s", err, mcp)
	}
	if r := run(t, t.TempDir(), "init", "--hooks"); r.code != 2 {
		t.Errorf("--hooks without --agent claude exits %d, want 2", r.code)
	}
}

// TestInitGitignoreFollowsTheWorkspace: the .gitignore lines name the
// workspace the config points at, not the config's own folder.
func TestInitGitignoreFollowsTheWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "skillsync.yaml"), []byte("workspace: ws\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, dir, "init", "--gitignore"); r.code != 0 {
		t.Fatalf("init --gitignore: %d %s", r.code, r.stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	for _, want := range []string{"/ws/.skills-cache/\n", "/ws/skills/.usage.json*\n", "/ws/skills/.audit/\n", "/ws/skills/.daemon.json*\n",
		"/ws/skills/.daemon.lock\n", "/ws/skills/.fleet-sync.json*\n", "/ws/skills/.fleet-pushed.json*\n", "/ws/skills/_drafts/.locks/\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf(".gitignore lacks %q:\n%s", want, data)
		}
	}
}

// TestInitHooksWritesAllOrNothing: a settings file the hook cannot be
// merged into fails init before anything is written: no skillsync.yaml,
// no target, no .mcp.json; and --hooks without an agent that has a hook
// is a usage error.
func TestInitHooksWritesAllOrNothing(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	settings := filepath.Join(ws, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"hooks": {"PostToolUse": {"matcher": "Skill"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "init", "--agent", "claude", "--hooks", "--mcp")
	if r.code != 1 || !strings.Contains(r.stderr, "settings.json") {
		t.Errorf("init with settings it cannot merge: %d %s", r.code, r.stderr)
	}
	for _, name := range []string{"skillsync.yaml", ".mcp.json", ".claude/skills"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	if r := run(t, ws, "init", "--agent", "cursor", "--hooks"); r.code != 2 || !strings.Contains(r.stderr, "--agent claude") {
		t.Errorf("--hooks for an agent without a hook: %d %s", r.code, r.stderr)
	}
}
