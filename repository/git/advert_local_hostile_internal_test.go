//go:build unix

package git

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"

	"github.com/skillsync/skillsync/internal/gittest"
)

// hostileRepos builds hostileRepo once, in t, and returns a function that
// gives each subtest a copy of it to spoil.
func hostileRepos(t *testing.T) func(t *testing.T) *gittest.Repo {
	t.Helper()
	template := hostileRepo(t)
	return func(t *testing.T) *gittest.Repo {
		t.Helper()
		return template.Copy(t)
	}
}

// hostileRepo is a repository with its objects and refs packed, for a
// test to spoil.
func hostileRepo(t *testing.T) *gittest.Repo {
	t.Helper()
	r := gittest.NewRepo(t, "main")
	r.Skill("skills/one", "First.")
	r.Commit("one")
	r.Git("tag", "-a", "-m", "tag", "v1")
	r.Git("branch", "side")
	r.Git("gc", "-q")
	// The annotated tag's own hash, for a test to point a ref at.
	if err := os.WriteFile(filepath.Join(r.Dir, ".tagobj"), []byte(r.Git("rev-parse", "v1")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// localWithin runs localAdvertisement, failing the test when it has not
// answered within 10 s (a read that waits forever).
func localWithin(t *testing.T, dir string) (*packp.AdvRefs, bool) {
	t.Helper()
	type answer struct {
		ar *packp.AdvRefs
		ok bool
	}
	c := make(chan answer, 1)
	go func() {
		ar, ok := localAdvertisement(dir, defaultAdvertisementLimits)
		c <- answer{ar, ok}
	}()
	select {
	case a := <-c:
		return a.ar, a.ok
	case <-time.After(10 * time.Second):
		t.Fatal("localAdvertisement has not answered in 10 s")
		return nil, false
	}
}

// fifo makes a FIFO at path; at the test's end it is opened for writing
// once, which lets a reader stuck opening it go.
func fifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// A file of the repository that is a FIFO, a device or a symlink to one
// is not waited on nor read without end: git upload-pack is left to
// answer.
func TestLocalAdvertisementHostileFiles(t *testing.T) {
	t.Parallel()
	newRepo := hostileRepos(t)
	for name, spoil := range map[string]func(t *testing.T, git string){
		"HEAD a FIFO": func(t *testing.T, git string) {
			os.Remove(filepath.Join(git, "HEAD"))
			fifo(t, filepath.Join(git, "HEAD"))
		},
		"HEAD to /dev/zero": func(t *testing.T, git string) {
			os.Remove(filepath.Join(git, "HEAD"))
			os.Symlink("/dev/zero", filepath.Join(git, "HEAD"))
		},
		"packed-refs a FIFO": func(t *testing.T, git string) {
			fifo(t, filepath.Join(git, "packed-refs"))
		},
		"config a FIFO": func(t *testing.T, git string) {
			fifo(t, filepath.Join(git, "config"))
		},
		"config to /dev/zero": func(t *testing.T, git string) {
			os.Remove(filepath.Join(git, "config"))
			os.Symlink("/dev/zero", filepath.Join(git, "config"))
		},
		"an index a FIFO": func(t *testing.T, git string) {
			packs, _ := filepath.Glob(filepath.Join(git, "objects", "pack", "*.idx"))
			if len(packs) == 0 {
				t.Fatal("no pack")
			}
			fifo(t, packs[0])
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			spoil(t, filepath.Join(r.Dir, ".git"))
			if _, ok := localWithin(t, r.Dir); ok {
				t.Error("read from the files")
			}
		})
	}
}

// Refs git would skip, refuse or read otherwise: the files either give
// git upload-pack's answer or leave it to git.
func TestLocalAdvertisementHostileRefs(t *testing.T) {
	t.Parallel()
	newRepo := hostileRepos(t)
	for name, spoil := range map[string]func(t *testing.T, git, head string){
		"HEAD a symlink to the branch": func(t *testing.T, git, head string) {
			os.Remove(filepath.Join(git, "HEAD"))
			os.Symlink("refs/heads/side", filepath.Join(git, "HEAD"))
			os.WriteFile(filepath.Join(git, "refs", "heads", "side"), []byte(head+"\n"), 0o644)
		},
		"a loose ref git skips (a dot)": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "refs", "heads", ".hidden"), []byte(head+"\n"), 0o644)
		},
		"a loose ref with a space": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "refs", "heads", "a b"), []byte(head+"\n"), 0o644)
		},
		"a loose ref with a control character": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "refs", "heads", "a\x01b"), []byte(head+"\n"), 0o644)
		},
		"a loose ref with a..b": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "refs", "heads", "a..b"), []byte(head+"\n"), 0o644)
		},
		"a loose ref with leading space": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "refs", "heads", "spaced"), []byte(" "+head+"\n"), 0o644)
		},
		"a packed ref with a space": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/x y\n")
		},
		"a packed ref with a carriage return": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/zz\r\n")
		},
		"a packed ref with ..": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/../../HEAD\n")
		},
		"a comment inside packed-refs": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), "# note\n"+head+" refs/heads/zz\n")
		},
		"a peeled line after a comment": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/zz\n# note\n^"+head+"\n")
		},
		"an unterminated last line": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/zz")
		},
		"a packed ref twice": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/zz\n"+head+" refs/heads/zz\n")
		},
		"a detached HEAD after a space": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "HEAD"), []byte(" "+head+"\n"), 0o644)
		},
		"a detached HEAD at a tag": func(t *testing.T, git, head string) {
			tag, _ := os.ReadFile(filepath.Join(git, "..", ".tagobj"))
			os.WriteFile(filepath.Join(git, "HEAD"), tag, 0o644)
		},
		"a branch at a tag, HEAD's": func(t *testing.T, git, head string) {
			tag, _ := os.ReadFile(filepath.Join(git, "..", ".tagobj"))
			os.WriteFile(filepath.Join(git, "refs", "heads", "main"), tag, 0o644)
		},
		"a loose ref over a packed one": func(t *testing.T, git, head string) {
			tag, _ := os.ReadFile(filepath.Join(git, "..", ".tagobj"))
			os.WriteFile(filepath.Join(git, "refs", "heads", "side"), tag, 0o644)
		},
		"an extension git does not know": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "config"), "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tbogus = true\n")
		},
		"HEAD naming HEAD": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/loop\n"), 0o644)
			os.WriteFile(filepath.Join(git, "refs", "heads", "loop"), []byte("ref: refs/heads/loop\n"), 0o644)
		},
		"a packed ref under a loose one": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "refs", "heads", "main"), []byte(head+"\n"), 0o644)
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/main/sub\n")
		},
		"a peeled line for a commit": func(t *testing.T, git, head string) {
			appendFile(t, filepath.Join(git, "packed-refs"), head+" refs/heads/zz\n^"+head+"\n")
		},
		"the null object": func(t *testing.T, git, head string) {
			os.WriteFile(filepath.Join(git, "refs", "heads", "null"), []byte(strings.Repeat("0", 40)+"\n"), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			spoil(t, filepath.Join(r.Dir, ".git"), r.Head())
			got, ok := localWithin(t, r.Dir)
			if !ok {
				return // git upload-pack answers
			}
			want, err := uploadPackAdvertisement(t.Context(), r.Dir, defaultAdvertisementLimits)
			if err != nil {
				t.Fatalf("read from the files (refs %v), but git upload-pack fails: %v", got.References, err)
			}
			sameAdvertisement(t, name, got, want)
		})
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
