package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace at the file system root or the home directory is refused at
// load, naming the line, as targets there are: skillsync would write its
// cache, lock and skills/ there.
func TestWorkspaceRootOrHomeRefused(t *testing.T) {
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
