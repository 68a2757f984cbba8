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
