package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestVerifyNamesALinkedTarget: verify names a target a hostile clone's
// link leads away (.claude -> elsewhere) as refused, exit 1, and does not
// count it as a source no sync has brought.
func TestVerifyNamesALinkedTarget(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\ntargets:\n  - dir: .claude/skills\n  - dir: .agents/skills\n")
	if r := run(t, ws, "sync"); r.code != 1 {
		t.Fatalf("sync: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r := run(t, ws, "verify")
	if r.code != 1 || !strings.Contains(r.stdout, "unsynced "+filepath.Join(ws, ".claude", "skills")+" (refused") || strings.Contains(r.stderr, "not in this cache") {
		t.Errorf("verify: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
		t.Errorf("written through the link: %v %v", entries, err)
	}
}
