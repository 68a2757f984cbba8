package repository_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
)

// TestGitViewPOSIXClasses: a rule with a POSIX class ([[:digit:]]) leaves
// out what git leaves out; an unknown class matches nothing.
func TestGitViewPOSIXClasses(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "[[:digit:]]*.key\n*.[[:upper:]][[:upper:]]\n[^[:alpha:]]x\nw[[:word:]]\n", 0)
	r.Skill("skills/tool", "A tool.")
	for _, f := range []string{"1.key", "a.key", "n.PY", "n.py", "_x", "ax", "wa"} {
		r.Write("skills/tool/"+f, "x\n", 0)
	}
	want := []string{"SKILL.md", "a.key", "ax", "n.py", "wa"}
	if got := viewFiles(t, filepath.Join(r.Dir, "skills", "tool"), env); !slices.Equal(got, want) {
		t.Errorf("served %q, want %q", got, want)
	}
	// git itself agrees.
	git := strings.Fields(r.Git("-C", "skills/tool", "ls-files", "-o", "--exclude-standard"))
	if slices.Sort(git); !slices.Equal(git, want) {
		t.Errorf("git keeps %q, the test wants %q", git, want)
	}
}
