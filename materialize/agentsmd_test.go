package materialize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSpliceAgentsMD(t *testing.T) {
	block := AgentsMDBlock("<available_skills>\n</available_skills>")
	for _, tt := range []struct{ name, old, want string }{
		{"empty", "", block},
		{"no markers", "# Project\n\nRun make.\n", "# Project\n\nRun make.\n\n" + block},
		{"no final newline", "# Project", "# Project\n\n" + block},
		{"blank line at the end", "# P\n\n", "# P\n\n" + block},
		{"replaced in the middle", "# P\n\n" + AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\nafter \xff bytes\r\n",
			"# P\n\n" + block + "after \xff bytes\r\n"},
		// A file whose lines end in \r\n (a Windows checkout) gets its
		// block in \r\n too.
		{"crlf replaced", "# P\r\n" + AgentsMDBegin + "\r\nold\r\n" + AgentsMDEnd + "\r\nafter\r\n",
			"# P\r\n" + strings.ReplaceAll(block, "\n", "\r\n") + "after\r\n"},
		{"crlf appended", "# P\r\n", "# P\r\n\r\n" + strings.ReplaceAll(block, "\n", "\r\n")},
		{"crlf after a blank line", "# P\r\n\r\n", "# P\r\n\r\n" + strings.ReplaceAll(block, "\n", "\r\n")},
		{"end marker at the end of the file", "a\n" + AgentsMDBegin + "\nold\n" + AgentsMDEnd, "a\n" + block},
		// Markers quoted in the user's prose are text: only lines of their
		// own delimit the block, so the rules between stay.
		{"markers quoted in prose", "skillsync keeps `" + AgentsMDBegin + "` and `" + AgentsMDEnd + "` lines.\nRULES\n" +
			AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\nafter\n",
			"skillsync keeps `" + AgentsMDBegin + "` and `" + AgentsMDEnd + "` lines.\nRULES\n" + block + "after\n"},
		{"a quoted begin, no block", "Say " + AgentsMDBegin + " here.\n", "Say " + AgentsMDBegin + " here.\n\n" + block},
		{"a quoted end inside the block", AgentsMDBegin + "\nsee " + AgentsMDEnd + " below\n" + AgentsMDEnd + "\nrest\n", block + "rest\n"},
		// A second block (a merge kept both sides' copies) would keep a
		// stale list beside the current one: it goes, the text around
		// it stays.
		{"a second block", "a\n" + AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\nb\n" + AgentsMDBegin + "\nolder\n" + AgentsMDEnd + "\r\nc\n",
			"a\n" + block + "b\nc\n"},
		{"three blocks", AgentsMDBegin + "\n1\n" + AgentsMDEnd + "\n" + AgentsMDBegin + "\n2\n" + AgentsMDEnd + "\nx\n" + AgentsMDBegin + "\n3\n" + AgentsMDEnd,
			block + "x\n"},
		{"a later begin without an end stays", AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\nb\n" + AgentsMDBegin + "\nnotes\n",
			block + "b\n" + AgentsMDBegin + "\nnotes\n"},
		{"a later block in a fence stays", AgentsMDBegin + "\nold\n" + AgentsMDEnd + "\n```\n" + AgentsMDBegin + "\nexample\n" + AgentsMDEnd + "\n```\n",
			block + "```\n" + AgentsMDBegin + "\nexample\n" + AgentsMDEnd + "\n```\n"},
	} {
		got, err := SpliceAgentsMD([]byte(tt.old), block)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %q %v, want %q", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"x\n" + AgentsMDBegin + "\nno end\n", AgentsMDEnd + "\n"} {
		if _, err := SpliceAgentsMD([]byte(bad), block); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestWriteAgentsMD(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "AGENTS.md")
	user := "# Team rules\n\nTabs, not spaces.\n"
	if err := os.WriteFile(p, []byte(user), 0o640); err != nil {
		t.Fatal(err)
	}
	block1 := AgentsMDBlock("<available_skills>\n<skill>one</skill>\n</available_skills>")
	if changed, err := WriteAgentsMD(root, p, block1); err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	if got := readFile(t, p); got != user+"\n"+block1 {
		t.Fatalf("file %q", got)
	}
	// The user edits around the block; the next block replaces only its own.
	edited := "Intro.\n" + readFile(t, p) + "Footer \x00 kept.\n"
	if err := os.WriteFile(p, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	block2 := AgentsMDBlock("<available_skills>\n<skill>two</skill>\n</available_skills>")
	if changed, err := WriteAgentsMD(root, p, block2); err != nil || !changed {
		t.Fatalf("second write: %v %v", changed, err)
	}
	if got := readFile(t, p); got != strings.Replace(edited, block1, block2, 1) {
		t.Fatalf("file %q", got)
	}
	if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v %v, want 0640 kept", info.Mode(), err)
	}
	// Nothing new: same bytes, same modification time.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	before := stat(t, p)
	if changed, err := WriteAgentsMD(root, p, block2); err != nil || changed {
		t.Errorf("unchanged write: %v %v", changed, err)
	}
	if stat(t, p) != before {
		t.Error("an AGENTS.md with the current block was written")
	}
	// A missing file is made, with its folder.
	sub := filepath.Join(root, "docs", "AGENTS.md")
	if changed, err := WriteAgentsMD(root, sub, block1); err != nil || !changed || readFile(t, sub) != block1 {
		t.Errorf("new file: %v %v %q", changed, err, readFile(t, sub))
	}
}

func TestWriteAgentsMDLinks(t *testing.T) {
	root := t.TempDir()
	block := AgentsMDBlock("x")
	// A link within the workspace is followed: the link stays a link.
	real := filepath.Join(root, "docs", "AGENTS.md")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("# Docs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "AGENTS.md")
	if err := os.Symlink("docs/AGENTS.md", link); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteAgentsMD(root, link, block); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if got := readFile(t, real); got != "# Docs\n\n"+block {
		t.Errorf("linked file %q", got)
	}
	// A link out of the workspace is refused and what it points at stays.
	outside := victim(t, t.TempDir())
	other := t.TempDir()
	out := filepath.Join(other, "AGENTS.md")
	if err := os.Symlink(outside, out); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteAgentsMD(other, out, block); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("link out of the workspace: %v", err)
	}
	assertIntact(t, outside)
	// So is a linked folder on the way.
	ws := t.TempDir()
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(ws, "docs")); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteAgentsMD(ws, filepath.Join(ws, "docs", "AGENTS.md"), block); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("linked folder out of the workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "AGENTS.md")); err == nil {
		t.Error("a file was made outside the workspace")
	}
	// A begin marker with no end is an error and the file stays.
	bad := filepath.Join(t.TempDir(), "AGENTS.md")
	if err := os.WriteFile(bad, []byte(AgentsMDBegin+"\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteAgentsMD(filepath.Dir(bad), bad, block); err == nil || readFile(t, bad) != AgentsMDBegin+"\nmine\n" {
		t.Errorf("unclosed marker: %v", err)
	}
}

// TestWriteAgentsMDNotIntoGit: an AGENTS.md a clone brought as a link into
// the repository's own folder (.git/config, a hook) or into the cache is
// refused (ErrOutsideWorkspace), the file it leads to left as it is.
func TestWriteAgentsMDNotIntoGit(t *testing.T) {
	t.Parallel()
	for _, dest := range []string{".git/config", ".git/hooks/pre-commit", ".GIT/info/exclude", ".skills-cache/.manifest.json"} {
		ws := t.TempDir()
		real := filepath.Join(ws, filepath.FromSlash(dest))
		if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(real, []byte("[core]\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(ws, "AGENTS.md")
		if err := os.Symlink(filepath.FromSlash(dest), link); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		if err := CheckAgentsMD(ws, link); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("%s: CheckAgentsMD: %v", dest, err)
		}
		if _, err := WriteAgentsMD(ws, link, AgentsMDBlock("x")); !errors.Is(err, ErrOutsideWorkspace) {
			t.Errorf("%s: WriteAgentsMD: %v", dest, err)
		}
		if got := readFile(t, real); got != "[core]\n" {
			t.Errorf("%s was written: %q", dest, got)
		}
	}
}
