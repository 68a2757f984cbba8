package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkedLayerSaysTheFix: a workspace whose skills/ is a symbolic link
// syncs, but the agents' hook fails at every call (the refusal to write
// through a link is kept): its message, and status, name the folder and
// the fix, a real folder or workspace: where the link leads. Before, the
// hook said "remove it", which took the layer away, and status said
// nothing.
func TestLinkedLayerSaysTheFix(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	real := filepath.Join(t.TempDir(), "skills")
	if err := os.Rename(filepath.Join(ws, "skills"), real); err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(ws, "skills")
	if err := os.Symlink(real, layer); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if r := run(t, ws, "sync"); r.code != 0 && r.code != 3 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	// The folder as the syncs before the link left it: nothing more is
	// written there through the link.
	before := names(t, real)
	fix := []string{"the layer folder " + layer + " is a symbolic link", "make " + layer + " a real folder", "set workspace: " + filepath.Dir(real)}
	hook := `{"hook_event_name":"PostToolUse","tool_name":"Skill","tool_input":{"skill":"release-notes"},"tool_use_id":"toolu_1","session_id":"s1","cwd":"` + ws + `"}`
	r := runIn(t, ws, nil, hook, "use", "--hook", "claude")
	if r.code != 1 {
		t.Errorf("the hook through a linked layer: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range fix {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the hook's message lacks %q:\n%s", want, r.stderr)
		}
	}
	r = run(t, ws, "status")
	if r.code != 1 {
		t.Errorf("status with a linked layer: exit %d\n%s", r.code, r.stdout)
	}
	for _, want := range fix {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	if after := names(t, real); after != before {
		t.Errorf("written through the link: %s, was %s", after, before)
	}
}

// names lists dir's entries.
func names(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return strings.Join(out, " ")
}
