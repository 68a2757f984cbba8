package targets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/materialize"
)

// TestRelLocation: a location in an AGENTS.md reads the same on every
// machine: relative below the file's folder, ~/ below the home, else
// as it is.
func TestRelLocation(t *testing.T) {
	t.Parallel()
	home := filepath.FromSlash("/home/ann")
	env := hostenv.New(home, []string{"HOME=" + home, "USERPROFILE=" + home})
	base := filepath.Join(home, "work", "proj")
	for loc, want := range map[string]string{
		"": "",
		filepath.Join(base, "skills", "a", "SKILL.md"):   "skills/a/SKILL.md",
		filepath.Join(home, ".claude", "skills", "b"):    "~/.claude/skills/b",
		filepath.FromSlash("/opt/skills/c/SKILL.md"):     "/opt/skills/c/SKILL.md",
		filepath.Join(home, "work", "other", "SKILL.md"): "~/work/other/SKILL.md",
	} {
		if got := relLocation(env, base, loc); got != want {
			t.Errorf("relLocation(%s) = %q, want %q", loc, got, want)
		}
	}
}

// TestCheckPathsRefusesLink: a target reached through a symbolic link
// below the workspace is refused before anything is written; one through
// real folders (made or not yet) is taken.
func TestCheckPathsRefusesLink(t *testing.T) {
	t.Parallel()
	ws, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(ws, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	home := t.TempDir()
	env := hostenv.New(ws, []string{"HOME=" + home, "USERPROFILE=" + home})
	ok := Places{Workspace: ws, Env: env, Targets: []materialize.Target{{Dir: filepath.Join(ws, ".agents", "skills")}}}
	if err := ok.CheckPaths(); err != nil {
		t.Errorf("a target through folders: %v", err)
	}
	bad := Places{Workspace: ws, Env: env, Targets: []materialize.Target{{Dir: filepath.Join(ws, ".claude", "skills")}}}
	if err := bad.CheckPaths(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a target through a link: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "skills")); !os.IsNotExist(err) {
		t.Errorf("something was written through the link: %v", err)
	}
}
