package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
)

// newGit returns a git source of url in a store of its own: discovery's
// tests read git trees through it.
func newGit(t *testing.T, url, ref string) *git.Git {
	t.Helper()
	cfg := git.GitConfig{Source: "team", URL: url, Ref: ref, Depth: 1, Timeout: 30 * time.Second, StoreRoot: t.TempDir()}
	return git.NewGit(cfg, repository.Options{MaxFileSize: 10 << 20})
}

func fetch(t *testing.T, g *git.Git) repository.FetchResult {
	t.Helper()
	res, err := g.Fetch(context.Background())
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return res
}
