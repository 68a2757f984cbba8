package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
)

const userSettings = `{
  "permissions": {"allow": ["Bash(npm test)"]},
  "model": "opus",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh && echo <ok>"}]}],
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier --write", "timeout": 30}]}]
  },
  "zzUnknown": {"nested": [1, 2.50, true]}
}`

// TestInstallHookKeepsUserSettings: the hook is added beside the user's
// hooks; every other setting, unknown keys, their order and the user's
// spelling of values stay; a second run adds nothing.
func TestInstallHookKeepsUserSettings(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	skilltest.WriteFileMode(t, path, userSettings, 0o600)
	got, out, err := InstallHook(project)
	if err != nil || out != Added || got != path {
		t.Fatalf("InstallHook = %s %s %v", got, out, err)
	}
	text := skilltest.ReadFile(t, path)
	var doc struct {
		Permissions struct{ Allow []string }
		Model       string
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		}
		ZZUnknown json.RawMessage `json:"zzUnknown"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	post := doc.Hooks["PostToolUse"]
	if len(post) != 2 || post[0].Matcher != "Edit|Write" || post[0].Hooks[0].Timeout != 30 ||
		post[1].Matcher != "Skill|Read" || post[1].Hooks[0].Command != HookCommand || post[1].Hooks[0].Type != "command" {
		t.Errorf("PostToolUse = %+v", post)
	}
	if doc.Model != "opus" || doc.Permissions.Allow[0] != "Bash(npm test)" || doc.Hooks["PreToolUse"][0].Hooks[0].Command != "guard.sh && echo <ok>" {
		t.Errorf("user settings changed: %s", text)
	}
	if !strings.Contains(text, "2.50") || !strings.Contains(text, "guard.sh && echo <ok>") {
		t.Errorf("values were respelled: %s", text)
	}
	if order := []int{strings.Index(text, `"permissions"`), strings.Index(text, `"model"`), strings.Index(text, `"hooks"`), strings.Index(text, `"zzUnknown"`)}; !(order[0] < order[1] && order[1] < order[2] && order[2] < order[3]) {
		t.Errorf("key order changed: %s", text)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the file's 0600 kept", info.Mode().Perm())
	}
	_, out, err = InstallHook(project)
	if err != nil || out != Present {
		t.Errorf("second InstallHook = %s %v", out, err)
	}
	if again := skilltest.ReadFile(t, path); again != text || strings.Count(again, HookCommand) != 1 {
		t.Errorf("a second run changed the file:\n%s", again)
	}
}

// TestInstallHookNewFile: without settings, .claude/settings.json is made
// with the hook alone.
func TestInstallHookNewFile(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	path, out, err := InstallHook(project)
	if err != nil || out != Added {
		t.Fatal(out, err)
	}
	want := `{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Skill|Read",
        "hooks": [
          {
            "type": "command",
            "command": "skillsync use --hook claude"
          }
        ]
      }
    ]
  }
}
`
	if got := skilltest.ReadFile(t, path); got != want {
		t.Errorf("new settings:\n%s", got)
	}
}

// TestInstallHookRefusesAndLeavesFile: a file that does not parse, hooks
// of the wrong shape and links are refused; the file stays as it was.
func TestInstallHookRefusesAndLeavesFile(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"not json":          `{"model": "opus",`,
		"not an object":     `["hooks"]`,
		"trailing data":     `{} {}`,
		"hooks not object":  `{"hooks": ["PostToolUse"]}`,
		"post not list":     `{"hooks": {"PostToolUse": {"matcher": "Skill"}}}`,
		"comments (JSONC)":  "{\n  // mine\n  \"model\": \"opus\"\n}",
		"empty with spaces": "  \n",
	} {
		t.Run(name, func(t *testing.T) {
			project := t.TempDir()
			path := filepath.Join(project, ".claude", "settings.json")
			skilltest.WriteFile(t, path, body)
			_, out, err := InstallHook(project)
			if name == "empty with spaces" {
				if err != nil || out != Added {
					t.Errorf("a blank file: %s %v", out, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, %s:\n%s", out, skilltest.ReadFile(t, path))
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "left as it is") {
				t.Errorf("error does not say which file and that it was left: %v", err)
			}
			if got := skilltest.ReadFile(t, path); got != body {
				t.Errorf("file changed to %s", got)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("files left beside it: %v", entries)
			}
		})
	}
}

func TestInstallHookRefusesLinks(t *testing.T) {
	t.Parallel()
	project, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "settings.json")
	skilltest.WriteFile(t, target, `{"model":"opus"}`)
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(project, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := InstallHook(project); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a linked settings file: %v", err)
	}
	linked := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(linked, ".claude")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := InstallHook(linked); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a linked .claude: %v", err)
	}
	if got := skilltest.ReadFile(t, target); got != `{"model":"opus"}` {
		t.Errorf("the link's target was written: %s", got)
	}
}

// TestInstallHookFindsOwnHookAnywhere: a skillsync hook the user moved
// into another group or spelled with a path counts as present.
func TestInstallHookFindsOwnHookAnywhere(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	body := `{"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/usr/local/bin/skillsync -q use --hook claude"}]}]}}`
	skilltest.WriteFile(t, filepath.Join(project, ".claude", "settings.json"), body)
	if _, out, err := InstallHook(project); err != nil || out != Present {
		t.Errorf("InstallHook = %s %v", out, err)
	}
}

// TestRegisterMCP: the server is added beside the user's servers, a second
// run writes nothing, and a skillsync entry the user changed is kept.
func TestRegisterMCP(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	path := filepath.Join(project, ".mcp.json")
	skilltest.WriteFile(t, path, `{"mcpServers": {"github": {"command": "gh-mcp", "env": {"TOKEN": "${GH_TOKEN}"}}}, "other": 1}`)
	got, out, err := RegisterMCP(project)
	if err != nil || out != Added || got != path {
		t.Fatalf("RegisterMCP = %s %s %v", got, out, err)
	}
	text := skilltest.ReadFile(t, path)
	var doc struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		}
		Other int
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.MCPServers["skillsync"]
	if s.Command != "skillsync" || len(s.Args) != 1 || s.Args[0] != "mcp" || doc.MCPServers["github"].Env["TOKEN"] != "${GH_TOKEN}" || doc.Other != 1 {
		t.Errorf(".mcp.json = %s", text)
	}
	if _, out, err := RegisterMCP(project); err != nil || out != Present || skilltest.ReadFile(t, path) != text {
		t.Errorf("second RegisterMCP = %s %v", out, err)
	}
	custom := `{"mcpServers":{"skillsync":{"command":"skillsync","args":["--config","/etc/s.yaml","mcp"]}}}`
	skilltest.WriteFile(t, path, custom)
	if _, out, err := RegisterMCP(project); err != nil || out != Kept || skilltest.ReadFile(t, path) != custom {
		t.Errorf("a changed entry: %s %v", out, err)
	}
	skilltest.WriteFile(t, path, `{"mcpServers": []}`)
	if _, _, err := RegisterMCP(project); err == nil {
		t.Error("mcpServers as a list was accepted")
	}
}

func TestRegisterMCPNewFile(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	path, out, err := RegisterMCP(project)
	if err != nil || out != Added {
		t.Fatal(out, err)
	}
	want := "{\n  \"mcpServers\": {\n    \"skillsync\": {\n      \"command\": \"skillsync\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"
	if got := skilltest.ReadFile(t, path); got != want {
		t.Errorf(".mcp.json:\n%s", got)
	}
}

// TestInstallHookWidensItsOldMatcher: a hook skillsync installed with the
// matcher "Skill" is made "Skill|Read"; a matcher the user chose is kept.
func TestInstallHookWidensItsOldMatcher(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	skilltest.WriteFile(t, path, `{"hooks":{"PostToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"fmt"}]},{"matcher":"Skill","hooks":[{"type":"command","command":"skillsync use --hook claude"}]}]}}`)
	if _, out, err := InstallHook(project); err != nil || out != Added {
		t.Fatalf("InstallHook = %s %v", out, err)
	}
	got := skilltest.ReadFile(t, path)
	if strings.Count(got, "skillsync use --hook claude") != 1 || !strings.Contains(got, `"matcher": "Skill|Read"`) || !strings.Contains(got, `"matcher": "Edit"`) {
		t.Errorf("settings:\n%s", got)
	}
	if _, out, err := InstallHook(project); err != nil || out != Present {
		t.Errorf("second InstallHook = %s %v", out, err)
	}
}

// TestInstallHookLeavesASharedGroupsMatcher: a "Skill" group that runs
// the user's own hooks beside skillsync's is the user's: widening its
// matcher would run those hooks on every Read too. It is left as it is.
func TestInstallHookLeavesASharedGroupsMatcher(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	body := `{"hooks":{"PostToolUse":[{"matcher":"Skill","hooks":[{"type":"command","command":"skillsync use --hook claude"},{"type":"command","command":"notify-team.sh"}]}]}}`
	skilltest.WriteFile(t, path, body)
	if _, out, err := InstallHook(project); err != nil || out != Present {
		t.Fatalf("InstallHook = %s %v", out, err)
	}
	if got := skilltest.ReadFile(t, path); got != body {
		t.Errorf("settings changed:\n%s", got)
	}
}
