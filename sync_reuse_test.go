package skillsync

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/platform"
)

// reuseUp is an upstream with one skill, alpha, of several small files.
// The tests of this file are a review's (an adversarial helper's) of the
// reuse of a changed skill's unchanged files (materialize/reuse.go).
func reuseUp(t *testing.T) *gittest.Repo {
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/alpha", "Alpha.")
	up.Write("skills/alpha/a.md", "alpha file a\n", 0o644)
	up.Write("skills/alpha/b.md", "alpha file b\n", 0o644)
	up.Write("skills/alpha/c.md", "alpha file c\n", 0o644)
	up.Write("skills/alpha/sub/x.md", "alpha sub x\n", 0o644)
	up.Write("skills/alpha/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	up.Commit("one")
	return up
}

func reuseConfig(up *gittest.Repo) string {
	return "repositories:\n  - name: team\n    git: " + up.URL() + "\n"
}

// freshHash is alpha's hash as a sync into an empty workspace locks it.
func freshHash(t *testing.T, up *gittest.Repo, skill string) string {
	t.Helper()
	e, ws := newWorkspace(t, reuseConfig(up))
	mustSync(t, e, SyncOptions{})
	return readLock(t, ws).Sources["team"].Skills[skill]
}

// sameAsUpstream checks that the cache's copy of the skill holds exactly
// the upstream work tree's files at dir (links followed), each read as a
// careful reader reads them (readSkill): a link planted in the cache that
// leads out of it is an error.
func sameAsUpstream(t *testing.T, up *gittest.Repo, dir, live string) {
	t.Helper()
	want, err := readSkill(filepath.Join(up.Dir, filepath.FromSlash(dir)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSkill(live)
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("the cache's copy: %q, %v\nwant upstream's: %q", got, err, want)
	}
}

// plantDirLink replaces the cache's sub folder with a link to a folder
// in scratch whose x.md holds content.
func plantDirLink(t *testing.T, live, scratch, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(scratch, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scratch, "sub", "x.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(live, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(scratch, "sub"), filepath.Join(live, "sub")); err != nil {
		t.Fatal(err)
	}
}

// plantFIFO puts a named pipe where the file at path was; the test is
// skipped where the system has none.
func plantFIFO(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := platform.Mkfifo(path); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no named pipes here")
	} else if err != nil {
		t.Fatal(err)
	}
}

func syncWithin(t *testing.T, e *Engine, opts SyncOptions) *SyncReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan *SyncReport, 1)
	go func() {
		r, err := e.Sync(ctx, opts)
		if err != nil {
			t.Errorf("sync: %v", err)
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(25 * time.Second):
		t.Fatal("sync hangs")
		return nil
	}
}

// A changed skill's unchanged files are taken from the cache only where
// that gives what the source gives: whatever was done to the cache's
// copy, or to the skill upstream, the sync locks the hash a sync into an
// empty workspace locks, leaves the copy as upstream has it, and verify
// finds nothing. The one exception is an edit that forges the stat data
// the cache recorded (same size, mtime set back): a sync trusts stat
// data, as one with nothing new does, so it keeps that copy, but the
// lock still has upstream's hash, verify names the file, and a sync
// --verify puts upstream's bytes back.
func TestSyncReusesUnchangedFilesOnlyWhenTheyHold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// tamper changes the cache's copy after the first sync.
		tamper func(t *testing.T, live, scratch string)
		// change makes the second upstream version; dir is where alpha
		// is after it.
		change func(up *gittest.Repo) (dir string)
		// forged: the tamper keeps the stat data the cache recorded.
		forged string
	}{
		{name: "plain"},
		{name: "fifo at a live path", tamper: func(t *testing.T, live, _ string) {
			plantFIFO(t, filepath.Join(live, "a.md"))
		}},
		{name: "same size edit, mtime kept", tamper: func(t *testing.T, live, _ string) {
			p := filepath.Join(live, "a.md")
			info, _ := os.Stat(p)
			os.WriteFile(p, []byte("ALPHA FILE A\n"), 0o644)
			os.Chtimes(p, info.ModTime(), info.ModTime())
		}, forged: "a.md"},
		{name: "dir link, same content", tamper: func(t *testing.T, live, scratch string) {
			plantDirLink(t, live, scratch, "alpha sub x\n")
		}},
		{name: "dir link, other content", tamper: func(t *testing.T, live, scratch string) {
			plantDirLink(t, live, scratch, "ALPHA SUB X\n")
		}},
		{name: "file link planted", tamper: func(t *testing.T, live, scratch string) {
			os.WriteFile(filepath.Join(scratch, "a.md"), []byte("alpha file a\n"), 0o644)
			os.Remove(filepath.Join(live, "a.md"))
			os.Symlink(filepath.Join(scratch, "a.md"), filepath.Join(live, "a.md"))
		}},
		{name: "file became link", change: func(up *gittest.Repo) string {
			up.Remove("skills/alpha/a.md")
			up.Write("skills/alpha/d.md", "alpha file a\n", 0o644)
			up.Symlink("d.md", "skills/alpha/a.md")
			return "skills/alpha"
		}},
		{name: "link became file", change: func(up *gittest.Repo) string {
			// in v2 c.md is a link to a.md; v3 makes it a file again
			up.Remove("skills/alpha/c.md")
			up.Symlink("a.md", "skills/alpha/c.md")
			up.Commit("c links")
			up.Remove("skills/alpha/c.md")
			up.Write("skills/alpha/c.md", "alpha file a\n", 0o644)
			return "skills/alpha"
		}},
		{name: "moved", change: func(up *gittest.Repo) string {
			os.MkdirAll(filepath.Join(up.Dir, "other"), 0o755)
			up.Git("mv", "skills/alpha", "other/alpha")
			up.Write("other/alpha/b.md", "alpha file b, edited\n", 0o644)
			return "other/alpha"
		}},
		{name: "mode change only", change: func(up *gittest.Repo) string {
			os.Chmod(filepath.Join(up.Dir, "skills/alpha/a.md"), 0o755)
			return "skills/alpha"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := reuseUp(t)
			e, ws := newWorkspace(t, reuseConfig(up))
			mustSync(t, e, SyncOptions{})
			live := filepath.Join(ws, ".skills-cache", "team", "alpha")
			if tc.tamper != nil {
				tc.tamper(t, live, t.TempDir())
			}
			dir := "skills/alpha"
			if tc.change != nil {
				dir = tc.change(up)
			} else {
				up.Write("skills/alpha/b.md", "alpha file b, edited\n", 0o644)
			}
			up.Commit("two")
			r := syncWithin(t, e, SyncOptions{})
			if r == nil {
				return
			}
			got := readLock(t, ws).Sources["team"].Skills["alpha"]
			if want := freshHash(t, up, "alpha"); got != want {
				t.Errorf("locked hash %s, a fresh sync locks %s", got, want)
			}
			if tc.forged != "" {
				diffs, err := e.Verify(context.Background())
				if err != nil || len(diffs) != 1 || diffs[0].Path != filepath.Join(live, tc.forged) {
					t.Errorf("verify after a forged edit: %v %v, want %s named", diffs, err, tc.forged)
				}
				mustSync(t, e, SyncOptions{Verify: true})
			}
			sameAsUpstream(t, up, dir, live)
			if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) > 0 {
				t.Errorf("verify: %v %v", diffs, err)
			}
			if info, err := os.Lstat(filepath.Join(live, "sub")); err == nil && info.Mode()&fs.ModeSymlink != 0 {
				t.Errorf("the planted link at sub is still in the cache after the sync")
			}
		})
	}
}

// The old tree is gone from the store: upstream rewrote its history, the
// store fetched the rewrite and was pruned, then an offline sync runs.
func TestSyncReuseWithTheOldTreePruned(t *testing.T) {
	t.Parallel()
	up := reuseUp(t)
	e, ws := newWorkspace(t, reuseConfig(up))
	mustSync(t, e, SyncOptions{})
	oldTree := up.Git("rev-parse", "HEAD:skills/alpha")
	up.Write("skills/alpha/b.md", "alpha file b, edited\n", 0o644)
	up.Git("add", "-A")
	up.Git("commit", "-q", "--amend", "-m", "rewritten")
	if _, err := e.Fetch(context.Background(), nil, 1); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(ws, ".git-store")
	pruned := false
	filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != "objects" {
			return nil
		}
		g := filepath.Dir(p)
		for _, args := range [][]string{{"reflog", "expire", "--expire=now", "--all"}, {"gc", "-q", "--prune=now"}} {
			out, err := exec.Command("git", append([]string{"--git-dir", g}, args...)...).CombinedOutput()
			t.Logf("git %s in %s: %v %s", strings.Join(args, " "), g, err, out)
		}
		if err := exec.Command("git", "--git-dir", g, "cat-file", "-e", oldTree).Run(); err != nil {
			pruned = true
		}
		return fs.SkipDir
	})
	if !pruned {
		t.Fatal("the old tree is still in the store")
	}
	mustSync(t, e, SyncOptions{Offline: true})
	got := readLock(t, ws).Sources["team"].Skills["alpha"]
	if want := freshHash(t, up, "alpha"); got != want {
		t.Errorf("locked hash %s, a fresh sync locks %s", got, want)
	}
	sameAsUpstream(t, up, "skills/alpha", filepath.Join(ws, ".skills-cache", "team", "alpha"))
}

// A known skill (its tree in the cache's records: lazySub) whose live copy
// fails the stat check is staged; SameContent goes through lazySub.
func TestSyncReuseOfAKnownSkill(t *testing.T) {
	t.Parallel()
	for _, edit := range []bool{false, true} {
		up := reuseUp(t)
		up.Skill("skills/beta", "Beta.")
		up.Commit("beta")
		e, ws := newWorkspace(t, reuseConfig(up))
		mustSync(t, e, SyncOptions{})
		live := filepath.Join(ws, ".skills-cache", "team", "alpha")
		p := filepath.Join(live, "a.md")
		if edit {
			os.WriteFile(p, []byte("ALPHA FILE A\n"), 0o644)
		}
		later := time.Now().Add(time.Hour)
		os.Chtimes(p, later, later)
		up.Write("skills/beta/notes.md", "beta notes\n", 0o644)
		up.Commit("beta grows")
		mustSync(t, e, SyncOptions{StatCheck: true})
		if got, want := readLock(t, ws).Sources["team"].Skills["alpha"], freshHash(t, up, "alpha"); got != want {
			t.Errorf("edit %v: locked hash %s, a fresh sync locks %s", edit, got, want)
		}
		sameAsUpstream(t, up, "skills/alpha", live)
	}
}

// A FIFO planted at a live path of a changed skill is never opened (an
// open has effects: it releases a writer waiting on it), though the
// source says the file there is unchanged. Its writer, a process of its
// own blocked in open(2), shows an open.
func TestSyncReuseOpensNoFIFO(t *testing.T) {
	t.Parallel()
	up := reuseUp(t)
	e, ws := newWorkspace(t, reuseConfig(up))
	mustSync(t, e, SyncOptions{})
	live := filepath.Join(ws, ".skills-cache", "team", "alpha")
	fifo := filepath.Join(live, "a.md")
	plantFIFO(t, fifo)
	// A writer of its own process, blocked in open(2) on the FIFO's
	// inode: no signal restarts it on another file after the swap.
	writer := exec.Command("sh", "-c", "exec 3>>\"$0\" && echo opened", fifo)
	var out strings.Builder
	writer.Stdout = &out
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { writer.Wait(); close(exited) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-exited:
		t.Fatalf("the writer did not block: %q", out.String())
	default:
	}
	opened := exited
	up.Write("skills/alpha/b.md", "alpha file b, edited\n", 0o644)
	up.Commit("two")
	syncWithin(t, e, SyncOptions{})
	select {
	case <-opened:
		t.Errorf("the sync opened the FIFO planted at a live path of the skill (writer: %q)", out.String())
	case <-time.After(500 * time.Millisecond):
		writer.Process.Kill()
	}
}

// Many changed skills staged at once (stageAll's 4 stagers), each with
// unchanged files read back from the cache and old trees looked up by
// hash in the shared tree cache; some skills share trees.
func TestSyncReuseSideBySide(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	for i := 0; i < 40; i++ {
		d := "skills/s" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		up.Skill(d, "Skill.")
		for j := 0; j < 6; j++ {
			up.Write(d+"/f"+string(rune('0'+j))+".md", strings.Repeat("x", j*100+i%3), 0o644)
		}
		up.Write(d+"/deep/a/b.md", "deep "+string(rune('0'+i%4)), 0o644)
	}
	up.Commit("one")
	e, ws := newWorkspace(t, reuseConfig(up))
	mustSync(t, e, SyncOptions{})
	for i := 0; i < 40; i++ {
		d := "skills/s" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		up.Write(d+"/f"+string(rune('0'+i%6))+".md", "edited "+string(rune('0'+i%3)), 0o644)
	}
	up.Commit("two")
	mustSync(t, e, SyncOptions{})
	got := readLock(t, ws).Sources["team"].Skills
	e3, ws3 := newWorkspace(t, reuseConfig(up))
	mustSync(t, e3, SyncOptions{})
	want := readLock(t, ws3).Sources["team"].Skills
	if !maps.Equal(got, want) {
		t.Errorf("locked hashes differ from a fresh sync's")
	}
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) > 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}

// A frozen sync back to the locked revision stages the skill with its
// unchanged files read from the cache; the frozen check sees the hash a
// fresh read gives.
func TestSyncReuseUnderAFrozenCheck(t *testing.T) {
	t.Parallel()
	up := reuseUp(t)
	e, ws := newWorkspace(t, reuseConfig(up))
	mustSync(t, e, SyncOptions{})
	lockPath := filepath.Join(ws, "skillsync.lock")
	v1Lock, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	v1Hash := readLock(t, ws).Sources["team"].Skills["alpha"]
	up.Write("skills/alpha/b.md", "alpha file b, edited\n", 0o644)
	up.Commit("two")
	mustSync(t, e, SyncOptions{})
	os.WriteFile(lockPath, v1Lock, 0o644)
	if _, err := e.Sync(context.Background(), SyncOptions{Frozen: true}); err != nil {
		t.Fatalf("frozen sync: %v", err)
	}
	if got := readLock(t, ws).Sources["team"].Skills["alpha"]; got != v1Hash {
		t.Errorf("frozen: %s, want %s", got, v1Hash)
	}
	b, _ := os.ReadFile(filepath.Join(ws, ".skills-cache", "team", "alpha", "b.md"))
	if string(b) != "alpha file b\n" {
		t.Errorf("b.md after the frozen sync: %q", b)
	}
}
