package agent_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillsync/skillsync/agent"
)

// An agent reads a folder that is its Project or one of its Also folders
// in the project, and no other.
func TestReaders(t *testing.T) {
	t.Parallel()
	reg, err := agent.NewRegistry(
		agent.Registration{Agent: "claude-code", Key: "claude"},
		agent.Registration{Agent: "codex", Key: "codex"},
		agent.Registration{Agent: "github-copilot", Key: "copilot"},
	)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "ws")
	for _, tc := range []struct {
		dir  string
		want []string
	}{
		{filepath.Join(root, ".claude", "skills"), []string{"claude", "copilot"}},
		{filepath.Join(root, ".claude", "skills") + string(filepath.Separator), []string{"claude", "copilot"}},
		{filepath.Join(root, ".agents", "skills"), []string{"codex", "copilot"}},
		{filepath.Join(root, ".codex", "skills"), []string{"codex"}},
		{filepath.Join(root, "skills"), nil},
		{filepath.Join(root, "sub", ".claude", "skills"), nil},
	} {
		if got := reg.Readers(root, tc.dir); !slices.Equal(got, tc.want) {
			t.Errorf("Readers(%s) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}
