package repository_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
)

// viewFiles lists the files a git view of dir serves, sorted.
func viewFiles(t *testing.T, dir string, env hostenv.Env) []string {
	t.Helper()
	view, err := repository.OpenGitView(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := fs.WalkDir(view, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got = append(got, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestGitViewFollowsConfigIncludes: a core.excludesFile set in a file
// ~/.gitconfig includes (include.path, or includeIf gitdir: that matches
// the repository), or in the repository's own config, is honoured as git
// honours it: its .env never reaches a publish. An includeIf whose
// gitdir does not match is not followed.
func TestGitViewFollowsConfigIncludes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, global, local string
		kept                bool // .env is served
	}{
		{name: "include", global: "[include]\n\tpath = .gitconfig.local\n"},
		{name: "include relative to a dotfiles folder", global: "[include]\n\tpath = dot/git.inc\n"},
		{name: "includeIf gitdir matches", global: "[includeIf \"gitdir:/\"]\n\tpath = ~/.gitconfig.local\n"},
		{name: "includeIf gitdir/i matches", global: "[includeIf \"gitdir/i:**/\"]\n\tpath = .gitconfig.local\n"},
		{name: "includeIf gitdir elsewhere", global: "[includeIf \"gitdir:/nowhere/\"]\n\tpath = .gitconfig.local\n", kept: true},
		{name: "repository config", local: "[core]\n\texcludesfile = ~/.gx\n"},
		{name: "none", kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			skilltest.WriteFile(t, filepath.Join(home, ".gx"), ".env\n")
			skilltest.WriteFile(t, filepath.Join(home, ".gitconfig.local"), "[core]\n\texcludesfile = ~/.gx\n")
			skilltest.WriteFile(t, filepath.Join(home, "dot", "git.inc"), "[core]\n\texcludesfile = ~/.gx\n")
			if tc.global != "" {
				skilltest.WriteFile(t, filepath.Join(home, ".gitconfig"), tc.global)
			}
			r := gittest.NewRepo(t, "main")
			if tc.local != "" {
				f, err := os.OpenFile(filepath.Join(r.Dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, werr := f.WriteString(tc.local)
				if err := errors.Join(werr, f.Close()); err != nil {
					t.Fatal(err)
				}
			}
			r.Skill("skills/tool", "A tool.")
			r.Write("skills/tool/.env", "API_KEY=sk-live-123\n", 0)
			env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
			want := []string{"SKILL.md"}
			if tc.kept {
				want = []string{".env", "SKILL.md"}
			}
			if got := viewFiles(t, filepath.Join(r.Dir, "skills", "tool"), env); !slices.Equal(got, want) {
				t.Errorf("served %q, want %q", got, want)
			}
		})
	}
}

// TestGitViewBoundsConfigIncludes: a ~/.gitconfig that includes itself
// many times over is read a bounded number of times (depth alone allowed
// 20^10 reads) and fails the view, naming the file, rather than serving
// the folder without its rules.
func TestGitViewBoundsConfigIncludes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(home, ".gitconfig"), "[include]\n"+strings.Repeat("\tpath = ~/.gitconfig\n", 20))
	r := gittest.NewRepo(t, "main")
	r.Skill("skills/tool", "A tool.")
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	done := make(chan error, 1)
	go func() {
		_, err := repository.OpenGitView(filepath.Join(r.Dir, "skills", "tool"), env)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), filepath.Join(home, ".gitconfig")) {
			t.Errorf("a config that includes itself: %v, want an error naming it", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the includes of a config that includes itself are still being read after 30 s")
	}
}
