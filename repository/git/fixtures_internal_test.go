package git

import (
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
)

// sharedDir is the folder TestMain makes for the test binary and removes
// after the tests: the fixtures built once for every test live there.
var sharedDir string

// packed is the repository packedRepo copies, built once.
var packed struct {
	once sync.Once
	repo *gittest.Repo
	err  error
}

// packedRepo returns a copy, in t, of a repository of one commit ("one",
// adding skills/one) whose objects and refs git gc packed: what nine
// tests spoil, each its own way. The repository is built once per test
// binary, by the first test that asks (whose failure it is when that
// fails), and only ever copied: the ten git processes that made it in
// each test were most of their CPU.
func packedRepo(t *testing.T) *gittest.Repo {
	t.Helper()
	packed.once.Do(func() {
		dir, err := os.MkdirTemp(sharedDir, "packed-")
		if err != nil {
			packed.err = err
			return
		}
		packed.err = errBuilding
		r := gittest.NewRepoIn(t, dir, "main")
		r.Skill("skills/one", "First.")
		r.Commit("one")
		r.Git("gc", "-q")
		packed.repo, packed.err = r, nil
	})
	if packed.repo == nil {
		t.Fatalf("the shared packed repository: %v", packed.err)
	}
	return packed.repo.Copy(t)
}

// errBuilding is the shared repository's error when the test building it
// failed before it was done.
var errBuilding = errors.New("the test building it failed")
