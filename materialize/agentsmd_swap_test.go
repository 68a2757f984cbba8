//go:build unix

package materialize

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A folder on the way to an AGENTS.md file, swapped for a link to a
// folder outside the workspace after WriteAgentsMD checked the path and
// before it reads and writes, is not written through: the write is
// refused as a link out of the workspace, and nothing lands outside.
func TestWriteAgentsMDNotThroughAFolderSwappedForALink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rel  string // the file, below the workspace
		swap string // the folder swapped, below the workspace
		had  bool   // the file was there before
	}{
		{"the file's folder, the file there", "docs/AGENTS.md", "docs", true},
		{"the file's folder, no file yet", "docs/AGENTS.md", "docs", false},
		{"a folder further up, the file's folder to make", "docs/new/AGENTS.md", "docs", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, outside := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(ws, "docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(ws, tt.rel)
			if tt.had {
				write(t, path, "# mine\n")
			}
			// What the link leads to holds a file of that name too.
			if err := os.MkdirAll(filepath.Join(outside, "new"), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(outside, "AGENTS.md"), "# outside\n")
			swap := func() {
				at := filepath.Join(ws, tt.swap)
				if err := os.Rename(at, at+".moved"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, at); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := writeAgentsMD(ws, path, AgentsMDBlock("x"), swap)
			if !errors.Is(err, ErrOutsideWorkspace) || changed {
				t.Errorf("writeAgentsMD = %v, %v; want a refusal wrapping ErrOutsideWorkspace", changed, err)
			}
			if got := readFile(t, filepath.Join(outside, "AGENTS.md")); got != "# outside\n" {
				t.Errorf("the file outside holds %q", got)
			}
			for _, dir := range []string{outside, filepath.Join(outside, "new")} {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if e.Name() != "AGENTS.md" && e.Name() != "new" {
						t.Errorf("%s was written outside the workspace", filepath.Join(dir, e.Name()))
					}
				}
			}
			if _, err := os.Lstat(filepath.Join(outside, "new", "AGENTS.md")); err == nil {
				t.Error("AGENTS.md was written outside the workspace")
			}
		})
	}
}
