package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/config"
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

// TestAgentNoneIsNotAskedAgain: init --agent none chose no target; add
// does not warn of it at every call, while a workspace that chose
// nothing still hears that no agent sees its skills.
func TestAgentNoneIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		init []string
		warn bool
	}{
		{[]string{"init", "--agent", "none"}, false},
		{[]string{"init"}, true},
	} {
		ws := t.TempDir()
		skilltest.Skill(t, filepath.Join(ws, "shared"), "notes", "Take notes.", nil)
		if r := run(t, ws, tt.init...); r.code != 0 {
			t.Fatalf("%v: %d %s", tt.init, r.code, r.stderr)
		}
		if got := strings.Contains(skilltest.ReadFile(t, filepath.Join(ws, "skillsync.yaml")), config.NoTargetComment); got == tt.warn {
			t.Errorf("%v: the config marks no target on purpose: %v", tt.init, got)
		}
		r := run(t, ws, "add", "./shared", "--no-sync")
		if r.code != 0 || strings.Contains(r.stderr, "no target") != tt.warn {
			t.Errorf("add after %v: %d %s; want a warning: %v", tt.init, r.code, r.stderr, tt.warn)
		}
	}
	// add --agent none writing the config chooses the same.
	ws := t.TempDir()
	skilltest.Skill(t, filepath.Join(ws, "shared"), "notes", "Take notes.", nil)
	run(t, ws, "add", "./shared", "--agent", "none", "--no-sync")
	if r := run(t, ws, "add", "./shared", "--skill", "notes", "--no-sync"); r.code != 0 || strings.Contains(r.stderr, "no target") {
		t.Errorf("add after add --agent none: %d %s", r.code, r.stderr)
	}
}

// TestHelpSaysSyncMovesEverySource: sync, and add's sync, move every
// source to its newest revision and keep to the lock only with --frozen,
// by design; their help says so, and how a team pins.
func TestHelpSaysSyncMovesEverySource(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string][]string{
		"sync": {"Every source moves to its newest revision", "only --frozen keeps to the", "pins with ref:", "sync --frozen in CI"},
		"add":  {"moves every source to its newest revision", "only sync --frozen keeps", "pin a source with --ref or ref:"},
	} {
		r := run(t, t.TempDir(), cmd, "--help")
		text := strings.Join(strings.Fields(r.stdout), " ")
		for _, w := range want {
			if r.code != 0 || !strings.Contains(text, w) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, w, r.stdout)
			}
		}
	}
}
