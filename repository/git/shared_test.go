package git_test

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/git"
)

// remoteURL returns a URL for up over file:// or smart HTTP.
func remoteURL(t *testing.T, up *gittest.Repo, over string) string {
	t.Helper()
	if over == "file" {
		return up.URL()
	}
	_, url := up.ServeHTTP("r", "", "")
	return url
}

// twoSkills commits skills/one ("one") and then skills/two ("two") on
// main: the commits Skill and Commit make, each made by one git
// fast-import instead of two processes, and packed, so that a fetch
// reads the refs from the files instead of starting git upload-pack.
func twoSkills(up *gittest.Repo) (first, second string) {
	first = up.ImportCommit("main", "one", map[string]gittest.File{"skills/one/SKILL.md": {Data: skilltest.SkillMD("one", "First.")}})
	second = up.ImportCommit("main", "two", map[string]gittest.File{"skills/two/SKILL.md": {Data: skilltest.SkillMD("two", "Second.")}})
	return first, second
}

// A shallow store lacks the parents of what it fetched. A commit behind
// that boundary (the target of a force-push back to a parent, or an older
// commit a workspace locked while another fetched a newer one) is fetched
// by its hash, telling the server where the store's history ends.
func TestGitFetchesCommitsBehindTheShallowBoundary(t *testing.T) {
	t.Parallel()
	for _, over := range []string{"file", "http"} {
		t.Run(over+"/force-push to the parent", func(t *testing.T) {
			up := gittest.NewRepo(t, "main")
			first, _ := twoSkills(up)
			g := newGit(t, remoteURL(t, up, over), "main")
			fetch(t, g)
			up.Git("reset", "-q", "--hard", first)
			if res := fetch(t, g); string(res.Revision) != first || !res.Updated {
				t.Errorf("after a force-push to the parent = %+v, want %s", res, first)
			}
			if got := names(t, g); !slices.Equal(got, []string{"one"}) {
				t.Errorf("skills = %v", got)
			}
		})
		t.Run(over+"/older locked commit on a shared store", func(t *testing.T) {
			up := gittest.NewRepo(t, "main")
			first, second := twoSkills(up)
			url, store := remoteURL(t, up, over), t.TempDir()
			shared := func(c *git.GitConfig) { c.StoreRoot = store }
			newer := newGit(t, url, "", shared)
			fetch(t, newer)
			// Another workspace, frozen at the first commit.
			older := newGit(t, url, first, shared)
			if res := fetch(t, older); string(res.Revision) != first {
				t.Errorf("the locked commit = %+v, want %s", res, first)
			}
			if got := names(t, older); !slices.Equal(got, []string{"one"}) {
				t.Errorf("skills at the locked commit = %v", got)
			}
			if cur, err := newer.Current(context.Background()); err != nil || string(cur) != second {
				t.Errorf("the other workspace moved: %s, %v", cur, err)
			}
		})
	}
	t.Run("file/server refuses commits by hash", func(t *testing.T) {
		up := gittest.NewRepo(t, "main")
		up.Git("config", "uploadpack.allowReachableSHA1InWant", "false")
		first, _ := twoSkills(up)
		store := t.TempDir()
		shared := func(c *git.GitConfig) { c.StoreRoot = store }
		fetch(t, newGit(t, up.URL(), "", shared))
		older := newGit(t, up.URL(), first, shared)
		if res := fetch(t, older); string(res.Revision) != first {
			t.Errorf("the locked commit = %+v, want %s", res, first)
		}
	})
}

// A fetch that brings less than it should never moves the source's ref:
// here the first fetch after a force-push brings nothing (the server
// thinks the store has the parent) and the second is over the size
// limit. The source stays at its last good commit, readable.
func TestGitFailedFetchLeavesTheRef(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	noise := make([]byte, 1<<20) // does not compress
	rand.New(rand.NewSource(2)).Read(noise)
	up.Write("skills/one/noise.bin", string(noise), 0)
	first := up.Commit("one, with 1 MiB of noise")
	up.Remove("skills/one/noise.bin")
	up.Skill("skills/two", "Second.")
	second := up.Commit("two, without the noise")
	g := newGit(t, up.URL(), "main", func(c *git.GitConfig) { c.MaxFetchSize = 512 << 10 })
	fetch(t, g)
	up.Git("reset", "-q", "--hard", first)
	if _, err := g.Fetch(context.Background()); !errors.Is(err, git.ErrSourceTooLarge) {
		t.Fatalf("err = %v, want ErrSourceTooLarge", err)
	}
	if cur, err := g.Current(context.Background()); err != nil || string(cur) != second {
		t.Errorf("Current = %s, %v; want the last good %s", cur, err, second)
	}
	if got := names(t, g); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("skills at the last good commit = %v", got)
	}
}
