package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestPrintedCommandsQuoteTheirPaths: a command a message tells the user
// to run holds the path as one shell word, so the copied line runs.
func TestPrintedCommandsQuoteTheirPaths(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	skilltest.Skill(t, filepath.Join(ws, "my skills"), "notes", "Take notes.", nil)
	r := run(t, ws, "add", "./my skills", "--no-sync")
	if r.code != 0 || !strings.Contains(r.stderr, "Add one with skillsync add './my skills' --agent NAME") {
		t.Errorf("add of a path with a space: %d %s", r.code, r.stderr)
	}
	r = run(t, ws, "ls-remote", "./my skills")
	if r.code != 0 || !strings.Contains(r.stderr, "add them with skillsync add './my skills' (") {
		t.Errorf("ls-remote of a path with a space: %d %s", r.code, r.stderr)
	}
}
