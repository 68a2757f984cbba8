package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// A workspace at the file system root or the home directory is refused at
// load, naming the line, as targets there are: skillsync would write its
// cache, lock and skills/ there.
func TestWorkspaceRootOrHomeRefused(t *testing.T) {
	t.Parallel()
	for _, ws := range []string{"/", "~/", "'~'", "$HOME"} {
		dir := t.TempDir()
		value := ws
		if ws == "$HOME" {
			value = home(t)
		}
		cfg := "strict: false\nworkspace: " + value + "\n"
		if err := os.WriteFile(filepath.Join(dir, "skillsync.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, dir, "sync")
		if r.code != 2 || !strings.Contains(r.stderr, "skillsync.yaml:2: workspace ") {
			t.Errorf("workspace: %s: %d %s", ws, r.code, r.stderr)
		}
		for _, p := range []string{filepath.Join(home(t), ".skills-cache"), filepath.Join(home(t), "skillsync.lock")} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("workspace: %s: %s was written", ws, p)
			}
		}
	}
	// A config in the home directory makes it the workspace: refused too.
	if err := os.WriteFile(filepath.Join(home(t), "skillsync.yaml"), []byte("strict: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, home(t), "sync"); r.code != 2 || !strings.Contains(r.stderr, "is the home directory") {
		t.Errorf("config in the home directory: %d %s", r.code, r.stderr)
	}
}

// writeSkill writes a SKILL.md named name with body under dir/name.
func writeSkill(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "---\nname: " + name + "\ndescription: " + name + " for tests\n---\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The built-in skills are the zero-config default only: init writes a
// config without them, one commented line enables them, and then a
// marketplace skill of the same name wins over the built-in one.
func TestBuiltinOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeSkill(t, filepath.Join(ws, "team"), "writing-skills", "the team's own")
	if r := run(t, ws, "init", "--agent", "claude"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "add", "./team"); r.code != 0 {
		t.Fatalf("add: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if fileExists(filepath.Join(ws, ".claude", "skills", "skillsync")) {
		t.Error("the built-in skill skillsync reached the target unasked")
	}
	if !strings.Contains(readFile(t, filepath.Join(ws, ".claude", "skills", "writing-skills", "SKILL.md")), "the team's own") {
		t.Error("the team's writing-skills is not in the target")
	}
	// The one commented line turns them on, below every other source.
	cfgPath := filepath.Join(ws, "skillsync.yaml")
	text := readFile(t, cfgPath)
	on := strings.Replace(text, "  # - embedded: builtin\n", "  - embedded: builtin\n", 1)
	if on == text {
		t.Fatalf("no commented line enables the built-in skills:\n%s", text)
	}
	if err := os.WriteFile(cfgPath, []byte(on), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "sync")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "conflict") {
		t.Fatalf("sync with the built-in skills: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if !fileExists(filepath.Join(ws, ".claude", "skills", "skillsync", "SKILL.md")) {
		t.Error("the built-in skill skillsync is missing once enabled")
	}
	if !strings.Contains(readFile(t, filepath.Join(ws, ".claude", "skills", "writing-skills", "SKILL.md")), "the team's own") {
		t.Error("the built-in writing-skills shadows the team's")
	}
	if !strings.Contains(r.stdout, "1 shadowed by a higher source") {
		t.Errorf("the shadowed built-in skill is not reported: %s", r.stdout)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// -g: one user-wide config in $XDG_CONFIG_HOME/skillsync, its cache and
// lock in $XDG_DATA_HOME/skillsync, usable from any folder, never mixed
// with the project's config in the current folder.
func TestGlobalWorkspace(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeSkill(t, src, "pdf", "pdf forms")
	project := t.TempDir()
	writeSkill(t, filepath.Join(project, "mine"), "local-only", "the project's")
	if r := run(t, project, "add", "./mine", "--agent", "none"); r.code != 0 {
		t.Fatalf("project add: %d %s", r.code, r.stderr)
	}
	before := readFile(t, filepath.Join(project, "skillsync.yaml"))
	data := filepath.Join(home(t), "data")
	env := []string{"XDG_DATA_HOME=" + data}
	if r := runEnv(t, project, env, "-g", "add", src, "--agent", "claude"); r.code != 0 {
		t.Fatalf("-g add: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if got := readFile(t, filepath.Join(project, "skillsync.yaml")); got != before {
		t.Errorf("-g add changed the project's config:\n%s", got)
	}
	global := filepath.Join(home(t), ".config", "skillsync", "skillsync.yaml")
	if !strings.Contains(readFile(t, global), "workspace: ~/data/skillsync\n") {
		t.Errorf("the global config's workspace is not the data folder:\n%s", readFile(t, global))
	}
	for _, p := range []string{filepath.Join(data, "skillsync", "skillsync.lock"), filepath.Join(data, "skillsync", ".skills-cache"), filepath.Join(home(t), ".claude", "skills", "pdf", "SKILL.md")} {
		if !fileExists(p) {
			t.Errorf("%s is missing", p)
		}
	}
	// From any folder: list sees the global skills only.
	r := runEnv(t, t.TempDir(), env, "-g", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "pdf") || strings.Contains(r.stdout, "local-only") {
		t.Errorf("-g list: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, project, "list"); !strings.Contains(r.stdout, "local-only") || strings.Contains(r.stdout, "pdf") {
		t.Errorf("the project's list mixes in the global skills: %s", r.stdout)
	}
	if r := runEnv(t, t.TempDir(), env, "-g", "remove", filepath.Base(src)); r.code != 0 || fileExists(filepath.Join(home(t), ".claude", "skills", "pdf")) {
		t.Errorf("-g remove: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runEnv(t, t.TempDir(), env, "-g", "sync"); r.code != 0 {
		t.Errorf("-g sync: %d %s", r.code, r.stderr)
	}
	// Without a global config, -g says how to make one.
	if err := os.Remove(global); err != nil {
		t.Fatal(err)
	}
	if r := run(t, project, "-g", "list"); r.code != 2 || !strings.Contains(r.stderr, "no global config") {
		t.Errorf("-g list without a global config: %d %s", r.code, r.stderr)
	}
}

// add in a folder without targets: the agents found are named with the
// --agent line that adds them; with none found, it says no agent will
// see the skills; --agent none keeps it so without a word.
func TestAddFindsAgents(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeSkill(t, src, "pdf", "pdf forms")
	ws := t.TempDir()
	r := run(t, ws, "add", src)
	if r.code != 0 || !strings.Contains(r.stderr, "no agent found") || !strings.Contains(r.stderr, "no agent will see these skills") {
		t.Errorf("add with no agent: %d %s", r.code, r.stderr)
	}
	if err := os.MkdirAll(filepath.Join(home(t), ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws = t.TempDir()
	r = run(t, ws, "add", src)
	if r.code != 0 || !strings.Contains(r.stderr, "Agents found here: claude-code") || !strings.Contains(r.stderr, "skillsync add "+src+" --agent claude-code") {
		t.Errorf("add with Claude Code installed: %d %s", r.code, r.stderr)
	}
	ws = t.TempDir()
	if r := run(t, ws, "add", src, "--agent", "none"); r.code != 0 || strings.Contains(r.stderr, "agent") {
		t.Errorf("add --agent none: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "init", "--force", "--agent", "none", "--agent", "codex"); r.code != 2 {
		t.Errorf("--agent none with another: %d %s", r.code, r.stderr)
	}
}

func TestParseChoice(t *testing.T) {
	t.Parallel()
	found := []agent.Agent{{Name: "claude-code"}, {Name: "codex"}, {Name: "cursor"}}
	for in, want := range map[string][]string{"": {"claude-code", "codex", "cursor"}, "none": {}, "3 1": {"cursor", "claude-code"}, "2,2": {"codex"}} {
		if got, ok := parseChoice(in, found); !ok || !slices.Equal(got, want) {
			t.Errorf("%q = %v %v", in, got, ok)
		}
	}
	for _, in := range []string{"0", "4", "x"} {
		if _, ok := parseChoice(in, found); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestUnknownSkillBeforeTheFirstSync: before any sync, a skill the
// sources have is not in the cache; use, show and read say that no sync
// has brought the source yet and that skillsync sync brings it, rather
// than sending the newcomer to a list that is empty. Once synced, a
// name that is not there still says so with the nearest names.
func TestUnknownSkillBeforeTheFirstSync(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, config, want string
	}{
		{"the built-in default", "", `no skill named "skillsync" in the cache: no sync has brought source builtin yet; skillsync sync brings it`},
		{"two sources", "repositories:\n  - embedded: builtin\n  - name: local\n    dir: local\n",
			`no skill named "skillsync" in the cache: no sync has brought sources builtin, local yet; skillsync sync brings them`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tc.config != "" {
				skilltest.WriteFile(t, filepath.Join(dir, "skillsync.yaml"), tc.config)
				skilltest.WriteFile(t, filepath.Join(dir, "local", "notes", "SKILL.md"), "---\nname: notes\ndescription: Take notes.\n---\n")
			}
			for _, args := range [][]string{{"use", "skillsync"}, {"show", "skillsync"}, {"read", "skillsync"}} {
				if r := run(t, dir, args...); r.code != 1 || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%v before a sync: exit %d\n%s", args, r.code, r.stderr)
				}
			}
			if r := run(t, dir, "sync"); r.code != 0 {
				t.Fatalf("sync: %d\n%s", r.code, r.stderr)
			}
			if r := run(t, dir, "use", "skillsync"); r.code != 0 {
				t.Errorf("use after the sync: %d\n%s", r.code, r.stderr)
			}
			if r := run(t, dir, "use", "skillsyn"); r.code != 1 || !strings.Contains(r.stderr, `no skill named "skillsyn"; did you mean skillsync?`) {
				t.Errorf("a near name after the sync: %d\n%s", r.code, r.stderr)
			}
		})
	}
}
