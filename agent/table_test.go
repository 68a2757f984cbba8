package agent

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestAgentTable(t *testing.T) {
	t.Parallel()
	names := map[string]string{}
	for i, a := range Agents() {
		if i > 0 && Agents()[i-1].Name >= a.Name {
			t.Errorf("the table is not sorted at %s", a.Name)
		}
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			if other, dup := names[n]; dup {
				t.Errorf("%s names both %s and %s", n, other, a.Name)
			}
			names[n] = a.Name
		}
		if a.Display == "" || a.Project == "" || filepath.IsAbs(a.Project) || strings.Contains(a.Project, "..") || !strings.HasSuffix(a.Project, "skills") {
			t.Errorf("%s: project folder %q", a.Name, a.Project)
		}
		if !strings.HasPrefix(a.User, "~/") && !strings.HasPrefix(a.User, "$XDG_CONFIG_HOME/") {
			t.Errorf("%s: user folder %q", a.Name, a.User)
		}
	}
	if len(names) < 40 {
		t.Errorf("%d names; npx skills alone knows about forty agents", len(names))
	}
	for name, want := range map[string]string{"claude": ".claude/skills", "Claude-Code": ".claude/skills", "codex": ".agents/skills", "cursor": ".cursor/skills", "copilot": ".agents/skills", "windsurf": ".windsurf/skills"} {
		if a, ok := Lookup(name); !ok || a.Project != want {
			t.Errorf("Lookup(%s) = %+v, %v", name, a, ok)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("an unknown agent was found")
	}
}

// agentHome makes a new folder the home directory of an environment
// with none of the variables that move an agent's folders set (extra adds
// KEY=VALUE pairs), and returns both.
func agentHome(t *testing.T, extra ...string) (string, hostenv.Env) {
	t.Helper()
	home := t.TempDir()
	return home, hostenv.New(home, append([]string{"HOME=" + home}, extra...))
}

func TestAgentTargets(t *testing.T) {
	t.Parallel()
	home, env := agentHome(t)

	got, skipped, err := Targets(env, []string{"claude", "codex", "gemini-cli", "claude-code", "copilot"}, false)
	want := []Target{{".claude/skills", []string{"claude-code"}}, {".agents/skills", []string{"codex", "gemini-cli", "github-copilot"}}}
	if err != nil || len(skipped) != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("project targets = %+v, %v, %v", got, skipped, err)
	}

	got, _, err = Targets(env, []string{"claude", "codex", "goose", "amp", "replit"}, true)
	want = []Target{{"~/.claude/skills", []string{"claude-code"}}, {"~/.codex/skills", []string{"codex"}},
		{"~/.config/goose/skills", []string{"goose"}}, {"~/.config/agents/skills", []string{"amp", "replit"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("user targets = %+v, %v", got, err)
	}
	elsewhere := t.TempDir()
	moved := hostenv.New(home, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + elsewhere, "XDG_CONFIG_HOME=" + filepath.Join(home, "cfg")})
	got, _, _ = Targets(moved, []string{"claude", "goose"}, true)
	if got[0].Dir != filepath.Join(elsewhere, "skills") || got[1].Dir != "~/cfg/goose/skills" {
		t.Errorf("with CLAUDE_CONFIG_DIR and XDG_CONFIG_HOME: %+v", got)
	}

	all, skipped, err := Targets(env, []string{"*"}, false)
	if err != nil || !reflect.DeepEqual(skipped, []string{"openclaw"}) {
		t.Fatalf("'*': skipped %v, %v", skipped, err)
	}
	dirs := map[string]bool{}
	for _, tg := range all {
		if dirs[tg.Dir] {
			t.Errorf("%s twice", tg.Dir)
		}
		dirs[tg.Dir] = true
	}
	if !dirs[".trae/skills"] || !dirs[".claude/skills"] || len(dirs) >= len(Agents()) {
		t.Errorf("'*' gave %d folders for %d agents", len(dirs), len(Agents()))
	}
	if _, _, err := Targets(env, []string{"openclaw"}, false); err == nil || !strings.Contains(err.Error(), "workspace layer") {
		t.Errorf("openclaw's project folder: %v", err)
	}
	if got, _, err := Targets(env, []string{"openclaw"}, true); err != nil || got[0].Dir != "~/.openclaw/skills" {
		t.Errorf("openclaw --global: %+v, %v", got, err)
	}
	if _, _, err := Targets(env, []string{"clod"}, false); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("an unknown agent: %v", err)
	}
}

func TestAgentInstalled(t *testing.T) {
	t.Parallel()
	home, env := agentHome(t)
	for _, p := range []string{".claude", ".config/goose", ".codeium/windsurf/skills"} {
		if err := os.MkdirAll(filepath.Join(home, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var found []string
	for _, a := range Agents() {
		if a.Installed(env) {
			found = append(found, a.Name)
		}
	}
	if !reflect.DeepEqual(found, []string{"claude-code", "goose", "windsurf"}) {
		t.Errorf("found = %v", found)
	}
	codex, _ := Lookup("codex")
	env = hostenv.New(home, []string{"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, "codex-home")})
	if err := os.MkdirAll(filepath.Join(home, "codex-home", "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !codex.Installed(env) || slices.Contains(found, "codex") {
		t.Error("codex under CODEX_HOME is not found")
	}
}
