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
		if a.AgentsMD != "" {
			// An agent that reads only AGENTS.md has no folders.
			if a.Project != "" || a.User != "" || a.UserEnv != "" || len(a.Also) > 0 || !filepath.IsLocal(a.AgentsMD) || len(a.Detect) == 0 {
				t.Errorf("%s: AGENTS.md agent %+v", a.Name, a)
			}
			continue
		}
		if a.Display == "" || a.Project == "" || filepath.IsAbs(a.Project) || strings.Contains(a.Project, "..") || !strings.HasSuffix(a.Project, "skills") {
			t.Errorf("%s: project folder %q", a.Name, a.Project)
		}
		if !strings.HasPrefix(a.User, "~/") && !strings.HasPrefix(a.User, "$XDG_CONFIG_HOME/") {
			t.Errorf("%s: user folder %q", a.Name, a.User)
		}
		for goos, p := range a.On {
			if !strings.HasPrefix(p.User, "~/") && !strings.HasPrefix(p.User, "$XDG_CONFIG_HOME/") && !(goos == "windows" && strings.HasPrefix(p.User, "$APPDATA/")) {
				t.Errorf("%s on %s: user folder %q", a.Name, goos, p.User)
			}
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
	want := []Target{{Dir: ".claude/skills", Agents: []string{"claude-code"}}, {Dir: ".agents/skills", Agents: []string{"codex", "gemini-cli", "github-copilot"}}}
	if err != nil || len(skipped) != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("project targets = %+v, %v, %v", got, skipped, err)
	}

	got, _, err = Targets(env, []string{"claude", "codex", "goose", "amp", "replit"}, true)
	want = []Target{{Dir: "~/.claude/skills", Agents: []string{"claude-code"}}, {Dir: "~/.codex/skills", Agents: []string{"codex"}},
		{Dir: "~/.config/goose/skills", Agents: []string{"goose"}}, {Dir: "~/.config/agents/skills", Agents: []string{"amp", "replit"}}}
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

// TestAgentFoldersOnEverySystem resolves the table for each system
// skillsync is built for, here on whatever runs the tests: "~" is that
// system's home (%USERPROFILE% on Windows), paths use its separator, and
// the agents that keep their folders elsewhere there (Goose under
// %APPDATA% on Windows) do.
func TestAgentFoldersOnEverySystem(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	win := System{GOOS: "windows", Getenv: env(map[string]string{
		"USERPROFILE": `C:\Users\ann`, "APPDATA": `C:\Users\ann\AppData\Roaming`, "HOME": "/ignored",
	})}
	mac := System{GOOS: "darwin", Getenv: env(map[string]string{"HOME": "/Users/ann"})}
	linux := System{GOOS: "linux", Getenv: env(map[string]string{"HOME": "/home/ann", "XDG_CONFIG_HOME": "/home/ann/cfg"})}
	for _, tt := range []struct {
		sys         System
		agent, want string
	}{
		{win, "claude-code", `C:\Users\ann\.claude\skills`},
		{win, "codex", `C:\Users\ann\.codex\skills`},
		{win, "opencode", `C:\Users\ann\.config\opencode\skills`},
		{win, "amp", `C:\Users\ann\.config\agents\skills`},
		{win, "goose", `C:\Users\ann\AppData\Roaming\Block\goose\config\skills`},
		{win, "windsurf", `C:\Users\ann\.codeium\windsurf\skills`},
		{mac, "claude-code", "/Users/ann/.claude/skills"},
		{mac, "goose", "/Users/ann/.config/goose/skills"},
		{mac, "opencode", "/Users/ann/.config/opencode/skills"},
		{linux, "goose", "/home/ann/cfg/goose/skills"},
		{linux, "cursor", "/home/ann/.cursor/skills"},
		{linux, "aider", ""},
	} {
		a, _ := Lookup(tt.agent)
		got, err := a.UserDirOn(tt.sys)
		if err != nil || got != tt.want {
			t.Errorf("%s on %s: %q %v, want %q", tt.agent, tt.sys.GOOS, got, err, tt.want)
		}
	}
	// The variables that move an agent's home move it on every system.
	for _, sys := range []System{
		{GOOS: "windows", Getenv: env(map[string]string{"USERPROFILE": `C:\Users\ann`, "CODEX_HOME": `D:\codex`, "CLAUDE_CONFIG_DIR": `D:\claude`, "XDG_CONFIG_HOME": `D:\cfg`})},
		{GOOS: "darwin", Getenv: env(map[string]string{"HOME": "/Users/ann", "CODEX_HOME": "/opt/codex", "CLAUDE_CONFIG_DIR": "/opt/claude", "XDG_CONFIG_HOME": "/opt/cfg"})},
	} {
		want := map[string]string{"codex": "/opt/codex/skills", "claude-code": "/opt/claude/skills", "opencode": "/opt/cfg/opencode/skills"}
		if sys.GOOS == "windows" {
			want = map[string]string{"codex": `D:\codex\skills`, "claude-code": `D:\claude\skills`, "opencode": `D:\cfg\opencode\skills`}
		}
		for name, w := range want {
			a, _ := Lookup(name)
			if got, err := a.UserDirOn(sys); err != nil || got != w {
				t.Errorf("%s on %s with its variable: %q %v, want %q", name, sys.GOOS, got, err, w)
			}
		}
	}
	// A relative XDG_CONFIG_HOME or APPDATA is ignored, as the agents do.
	rel := System{GOOS: "windows", Getenv: env(map[string]string{"USERPROFILE": `C:\Users\ann`, "XDG_CONFIG_HOME": `cfg`, "APPDATA": `roaming`})}
	for name, w := range map[string]string{"opencode": `C:\Users\ann\.config\opencode\skills`, "goose": `C:\Users\ann\AppData\Roaming\Block\goose\config\skills`} {
		a, _ := Lookup(name)
		if got, err := a.UserDirOn(rel); err != nil || got != w {
			t.Errorf("%s with relative variables: %q %v, want %q", name, got, err, w)
		}
	}
	// Every agent resolves below the home directory on every system.
	for _, sys := range []System{win, mac, linux, {GOOS: "freebsd", Getenv: env(map[string]string{"HOME": "/home/ann"})}} {
		home, _ := sys.Home()
		for _, a := range Agents() {
			dir, err := a.UserDirOn(sys)
			if a.AgentsMD != "" {
				if dir != "" || err != nil {
					t.Errorf("%s on %s: %q %v, want no user folder", a.Name, sys.GOOS, dir, err)
				}
				continue
			}
			if err != nil || !strings.HasPrefix(dir, home) || !sys.isAbs(dir) || (sys.GOOS == "windows") != strings.Contains(dir, `\`) || (sys.GOOS == "windows") == strings.Contains(dir, "/") {
				t.Errorf("%s on %s: %q %v", a.Name, sys.GOOS, dir, err)
			}
			for _, p := range a.DetectOn(sys) {
				if !strings.HasPrefix(p, home) {
					t.Errorf("%s on %s detects %q, outside the home directory", a.Name, sys.GOOS, p)
				}
			}
		}
	}
	if _, err := (System{GOOS: "windows", Getenv: env(map[string]string{"HOME": "/home/ann"})}).Home(); err == nil || !strings.Contains(err.Error(), "USERPROFILE") {
		t.Errorf("Windows without USERPROFILE: %v", err)
	}
}

// TestAgentsMDAgents: aider reads only a project's AGENTS.md; its target
// is that file, and it has none under --global.
func TestAgentsMDAgents(t *testing.T) {
	t.Parallel()
	_, env := agentHome(t)
	got, _, err := Targets(env, []string{"aider", "claude"}, false)
	want := []Target{{AgentsMD: "AGENTS.md", Agents: []string{"aider"}}, {Dir: ".claude/skills", Agents: []string{"claude-code"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("targets %+v %v, want %+v", got, err, want)
	}
	if _, _, err := Targets(env, []string{"aider"}, true); err == nil || !strings.Contains(err.Error(), "AGENTS.md") {
		t.Errorf("aider --global: %v", err)
	}
	all, skipped, err := Targets(env, []string{"*"}, true)
	if err != nil || !slices.Contains(skipped, "aider") {
		t.Errorf("'*' --global: skipped %v, %v", skipped, err)
	}
	for _, tg := range all {
		if tg.AgentsMD != "" || tg.Dir == "" {
			t.Errorf("'*' --global gave %+v", tg)
		}
	}
	all, _, _ = Targets(env, []string{"*"}, false)
	if !slices.ContainsFunc(all, func(tg Target) bool { return tg.AgentsMD == "AGENTS.md" }) {
		t.Error("'*' in a project has no AGENTS.md target")
	}
	if slices.Contains(ProjectFolders(), "") {
		t.Error("ProjectFolders holds an empty folder")
	}
}
