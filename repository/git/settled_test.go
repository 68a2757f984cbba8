package git_test

import (
	"context"
	"slices"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
)

// A source that did not fetch (an offline sync, or one whose fetch failed
// and that falls back to its local copy) records the revision Current
// reads and then reads its skills: both must be of one commit, though a
// sync of another workspace sharing the store moves the ref in between.
func TestGitReadsTheRevisionCurrentSaidWhenTheSharedStoreMoves(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	first, _ := twoSkills(up)
	up.Git("reset", "-q", "--hard", first)
	stores := t.TempDir()
	shared := func(c *git.GitConfig) { c.StoreRoot = stores }
	fetch(t, newGit(t, up.URL(), "", shared))

	ctx := context.Background()
	offline := newGit(t, up.URL(), "", shared)
	rev, err := repository.Current(ctx, offline)
	if err != nil || string(rev) != first {
		t.Fatalf("Current = %s, %v; want %s", rev, err, first)
	}
	up.Skill("skills/three", "Third.")
	up.Commit("three")
	fetch(t, newGit(t, up.URL(), "", shared)) // another workspace's sync

	if got := names(t, offline); !slices.Equal(got, []string{"one"}) {
		t.Errorf("skills %v read after Current said %s; want [one], that commit's", got, first[:8])
	}
}
