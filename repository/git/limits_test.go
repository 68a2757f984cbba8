package git_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/testmain"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/skill"
)

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A blob that is 64 MiB inflated and a few hundred KiB packed is fetched,
// listed and refused without ever being held in memory (go-git's own
// indexing of the pack held it whole). Held whole it would take twice
// the fetch's bound below; it was 256 MiB, which cost 12 s of CPU under
// -race (git deflating it, upload-pack packing it, the indexer inflating
// it) for no more proof.
func TestGitHugeBlobIsNeverInflated(t *testing.T) {
	// It measures the memory of the whole process, which parallel tests
	// would add to: it runs in a process of its own, beside them.
	if testmain.OwnProcess(t) {
		return
	}
	up := gittest.NewRepo(t, "main")
	// Packed here, as git would pack it: git hash-object compressing it
	// and upload-pack compressing it again cost 2 s of CPU.
	zero := up.PackObject("blob", gittest.Repeated{Unit: "\x00", Size: 64 << 20})
	big := up.MkTree("100644 blob "+up.Blob(skillMD("big").Data)+"\tSKILL.md", "100644 blob "+zero+"\tzero.bin")
	small := up.MkTree("100644 blob " + up.Blob(skillMD("small").Data) + "\tSKILL.md")
	skills := up.MkTree("040000 tree "+big+"\tbig", "040000 tree "+small+"\tsmall")
	up.CommitTree("main", "a huge blob", "040000 tree "+skills+"\tskills")

	// Indexing the fetched pack inflates the 64 MiB blob once (as git's
	// index-pack does) without keeping it; under -race on a loaded
	// machine that takes longer than newGit's 30 s, and the time is not
	// what this test is about.
	g := newGit(t, up.URL(), "", func(c *git.GitConfig) { c.Timeout = 10 * time.Minute })
	if n := allocated(func() { fetch(t, g) }); n > 32<<20 {
		t.Errorf("the fetch allocated %d MiB", n>>20)
	}
	var got []string
	var problems []skill.Problem
	if n := allocated(func() {
		var list []skill.Skill
		var err error
		list, problems, err = g.Skills(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			got = append(got, s.Name)
		}
	}); n > 8<<20 {
		t.Errorf("listing allocated %d MiB", n>>20)
	}
	if !slices.Equal(got, []string{"small"}) {
		t.Errorf("skills = %v, want small only", got)
	}
	if !slices.ContainsFunc(problems, func(p skill.Problem) bool { return p.Rule == "file-too-large" && p.File == "skills/big/zero.bin" }) {
		t.Errorf("no file-too-large for big/zero.bin: %v", problems)
	}
	fsys, err := g.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := allocated(func() { _, err = fsys.Open("skills/big/zero.bin") }); n > 1<<20 {
		t.Errorf("refusing the blob allocated %d KiB", n>>10)
	}
	if !errors.Is(err, git.ErrTooLarge) {
		t.Errorf("open of a blob over max_file_size = %v, want ErrTooLarge", err)
	}
}

// One 10 MiB blob named by 300 entries of a skill: each file streams, so
// reading them never holds one whole. The first two are read to the end,
// the others in part, which is enough to see what opening one costs.
func TestGitSharedBlobStreams(t *testing.T) {
	// It measures the memory of the whole process, which parallel tests
	// would add to: it runs in a process of its own, beside them.
	if testmain.OwnProcess(t) {
		return
	}
	up := gittest.NewRepo(t, "main")
	blob := up.PackObject("blob", gittest.Repeated{Unit: "\x00", Size: 10 << 20})
	lines := []string{"100644 blob " + up.Blob(skillMD("wide").Data) + "\tSKILL.md"}
	for i := 0; i < 300; i++ {
		lines = append(lines, fmt.Sprintf("100644 blob %s\tf%03d.bin", blob, i))
	}
	wide := up.MkTree(lines...)
	up.CommitTree("main", "wide", "040000 tree "+up.MkTree("040000 tree "+wide+"\twide")+"\tskills")

	// No cap on the totals: this is about streaming, and 300 x
	// 10 MiB is over the skill and source caps (tested on their own).
	g := git.NewGit(git.GitConfig{Source: "team", URL: up.URL(), Depth: 1, Timeout: 30 * time.Second, StoreRoot: t.TempDir()},
		repository.Options{MaxFileSize: 10 << 20, MaxSkillSize: -1, MaxSourceSize: -1})
	fetch(t, g)
	list, problems, err := g.Skills(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("skills = %v, %v, %v", list, problems, err)
	}
	var most uint64
	for i := 0; i < 300; i++ {
		name := fmt.Sprintf("f%03d.bin", i)
		limit, want := int64(64<<10), int64(64<<10)
		if i < 2 {
			limit, want = 11<<20, 10<<20
		}
		var n int64
		a := allocated(func() {
			f, err := list[0].Files.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if n, err = io.Copy(io.Discard, io.LimitReader(f, limit)); err != nil {
				t.Fatal(err)
			}
		})
		if n != want {
			t.Fatalf("%s: read %d bytes, want %d", name, n, want)
		}
		most = max(most, a)
	}
	if most > 1<<20 {
		t.Errorf("reading one 10 MiB file allocated up to %d KiB", most>>10)
	}
}

// A host that accepts the connection and never answers (no SSH banner,
// no HTTP response) ends the fetch at its timeout, or when its context is
// cancelled, and the connection is closed.
func TestGitSilentHostEndsWithTheContext(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		scheme string
		cancel bool
	}{{"ssh", false}, {"http", false}, {"ssh", true}, {"http", true}} {
		t.Run(fmt.Sprintf("%s/cancel=%v", tt.scheme, tt.cancel), func(t *testing.T) {
			srv := gittest.StartSilent(t)
			g := newGit(t, tt.scheme+"://git@"+srv.Addr+"/r", "", func(c *git.GitConfig) {
				c.Timeout = time.Second
				if tt.cancel {
					c.Timeout = time.Hour
				}
				c.Auth.SSHKeyFile, c.Auth.KnownHostsFile = gittest.ClientKey(t)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := g.Fetch(ctx)
				errc <- err
			}()
			if tt.cancel {
				// As SIGTERM does, once the host has the connection.
				for srv.Accepted.Load() == 0 {
					time.Sleep(10 * time.Millisecond)
				}
				cancel()
			}
			select {
			case err := <-errc:
				switch {
				case tt.cancel && !errors.Is(err, context.Canceled):
					t.Errorf("err = %v, want it cancelled", err)
				case !tt.cancel && (!errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timeout of 1s")):
					t.Errorf("err = %v, want the timeout named", err)
				}
			case <-time.After(2 * time.Minute): // generous: only a hang gets here
				t.Fatal("the fetch did not end with its context")
			}
			if !srv.WaitClosed(30 * time.Second) {
				t.Errorf("%d of %d connections to the host were left open", srv.Accepted.Load()-srv.Closed.Load(), srv.Accepted.Load())
			}
		})
	}
}

// go-git reads commits, trees and tags whole, so a fetch refuses one over
// 16 MiB (real ones are far smaller) and keeps the store as it was.
func TestGitRefusesHugeCommits(t *testing.T) {
	// It measures the memory of the whole process, which parallel tests
	// would add to: it runs in a process of its own, beside them.
	if testmain.OwnProcess(t) {
		return
	}
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	first := up.Commit("one")
	g := newGit(t, up.URL(), "main")
	fetch(t, g)
	// A commit of the same tree with a 17 MiB message, packed here as
	// git would pack it: made in the test's memory, written out and
	// compressed by git commit-tree and again by upload-pack, it cost
	// 2 s of CPU.
	const who = "Test <test@example.com> 1767323045 +0000"
	head := "tree " + up.Git("rev-parse", "HEAD^{tree}") + "\nparent " + first + "\nauthor " + who + "\ncommitter " + who + "\n\n"
	unit := "a commit message that goes on "
	huge := up.PackObject("commit", gittest.Repeated{Head: head, Unit: unit, Size: int64(len(head) + 600_000*len(unit))}) // 17 MiB
	up.Git("update-ref", "refs/heads/main", huge)
	var err error
	if n := allocated(func() { _, err = g.Fetch(context.Background()) }); n > 32<<20 {
		t.Errorf("the refused fetch allocated %d MiB", n>>20)
	}
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("err = %v, want a commit over the limit", err)
	}
	if cur, err := g.Current(context.Background()); err != nil || string(cur) != first {
		t.Errorf("Current = %s, %v; want %s", cur, err, first)
	}
}
