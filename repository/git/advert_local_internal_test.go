package git

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"

	"github.com/skillsync/skillsync/internal/gittest"
)

// gitAdvertisement is git upload-pack's own answer, for comparison.
func gitAdvertisement(t *testing.T, path string) *packp.AdvRefs {
	t.Helper()
	ar, err := uploadPackAdvertisement(context.Background(), path, defaultAdvertisementLimits)
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

func sameAdvertisement(t *testing.T, what string, got, want *packp.AdvRefs) {
	t.Helper()
	if !maps.Equal(got.References, want.References) {
		t.Errorf("%s: refs %v, git upload-pack %v", what, got.References, want.References)
	}
	if !maps.Equal(got.Peeled, want.Peeled) {
		t.Errorf("%s: peeled %v, git upload-pack %v", what, got.Peeled, want.Peeled)
	}
	if (got.Head == nil) != (want.Head == nil) || got.Head != nil && *got.Head != *want.Head {
		t.Errorf("%s: HEAD %v, git upload-pack %v", what, got.Head, want.Head)
	}
	if g, w := got.Capabilities.Get(capability.SymRef), want.Capabilities.Get(capability.SymRef); !slices.Equal(g, w) {
		t.Errorf("%s: symref %v, git upload-pack %v", what, g, w)
	}
	gr, err := referencesOf(got)
	if err != nil {
		t.Fatal(err)
	}
	wr, _ := referencesOf(want)
	if len(gr) != len(wr) {
		t.Errorf("%s: %d references, git upload-pack %d", what, len(gr), len(wr))
	}
}

// Read from the repository's files, the advertisement is git
// upload-pack's: packed and loose refs, annotated tags packed and loose
// (a tag of a tag too), a symbolic HEAD and a detached one, a bare
// repository and a work tree.
func TestLocalAdvertisementIsUploadPacks(t *testing.T) {
	// The machine's own git config could hide refs: TestMain sets none.
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	first := up.Commit("one")
	up.Git("tag", "-a", "-m", "packed", "v1")
	up.Git("tag", "light")
	up.Git("branch", "side")
	up.Skill("skills/two", "Second.")
	up.Commit("two")
	up.Git("gc", "-q") // packs objects and refs
	up.Skill("skills/three", "Third.")
	up.Commit("three")
	up.Git("tag", "-a", "-m", "loose", "v3")
	up.Git("tag", "-a", "-m", "of a tag", "v3-again", "v3")
	up.Git("repack", "-q", "-d") // objects packed, the new refs loose
	bare := filepath.Join(t.TempDir(), "bare.git")
	up.Git("clone", "-q", "--bare", up.Dir, bare)
	for name, path := range map[string]string{"work tree": up.Dir, "bare": bare} {
		got, ok := localAdvertisement(path, defaultAdvertisementLimits)
		if !ok {
			t.Fatalf("%s: not read from the files", name)
		}
		sameAdvertisement(t, name, got, gitAdvertisement(t, path))
		if len(got.Peeled) < 3 {
			t.Errorf("%s: peeled %v, want the three annotated tags", name, got.Peeled)
		}
	}
	up.Git("checkout", "-q", "--detach", first)
	got, ok := localAdvertisement(up.Dir, defaultAdvertisementLimits)
	if !ok {
		t.Fatal("detached HEAD: not read from the files")
	}
	sameAdvertisement(t, "detached HEAD", got, gitAdvertisement(t, up.Dir))
}

// What the files alone cannot answer as git would is left to git
// upload-pack.
func TestLocalAdvertisementLeavesOddCasesToGit(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(r *gittest.Repo){
		"loose objects": func(r *gittest.Repo) {},
		"hidden refs": func(r *gittest.Repo) {
			r.Git("config", "uploadpack.hideRefs", "refs/heads/secret")
		},
		"a ref being written": func(r *gittest.Repo) {
			os.WriteFile(filepath.Join(r.Dir, ".git", "refs", "heads", "main.lock"), []byte(r.Head()+"\n"), 0o644)
		},
		"a symbolic ref under refs": func(r *gittest.Repo) {
			r.Git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
		},
		"unborn HEAD": func(r *gittest.Repo) {
			r.Git("symbolic-ref", "HEAD", "refs/heads/none")
		},
		"limits": func(r *gittest.Repo) {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Every case but the first spoils a packed repository.
			var r *gittest.Repo
			if name == "loose objects" {
				r = gittest.NewRepo(t, "main")
				r.Skill("skills/one", "First.")
				r.Commit("one")
			} else {
				r = packedRepo(t)
			}
			setup(r)
			lim := defaultAdvertisementLimits
			if name == "limits" {
				lim.refs = 1
			}
			if _, ok := localAdvertisement(r.Dir, lim); ok {
				t.Error("read from the files")
			}
		})
	}
	if _, ok := localAdvertisement(t.TempDir(), defaultAdvertisementLimits); ok {
		t.Error("a folder that is no repository was read")
	}
}
