package skillsync

// Tests of one truth on disk (what a workspace has is what its cache
// records and its lock say) through the Go API, as a program that embeds
// skillsync meets them.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/workspace"
)

var errFault = errors.New("injected fault")

// faultyFS is an embedded file system with faults that can be switched on:
// opening one file fails, reading another fails after it opened, and
// ReadFile fails for both, as a broken build or a vanished file would.
// It has no Sub, so every access, a sub-tree's too, goes through it.
type faultyFS struct {
	fsys               fstest.MapFS
	on                 *atomic.Bool
	failOpen, failRead string
}

func (f *faultyFS) Open(name string) (fs.File, error) {
	if f.on.Load() && name == f.failOpen {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errFault}
	}
	file, err := f.fsys.Open(name)
	if err == nil && f.on.Load() && name == f.failRead {
		return unreadable{file}, nil
	}
	return file, err
}

func (f *faultyFS) ReadFile(name string) ([]byte, error) {
	if f.on.Load() && (name == f.failOpen || name == f.failRead) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errFault}
	}
	return f.fsys.ReadFile(name)
}

type unreadable struct{ fs.File }

func (unreadable) Read([]byte) (int, error) { return 0, errFault }

func embeddedSkill(fsys fstest.MapFS, name, body string, extra map[string]string) {
	fsys[name+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n" + body), Mode: 0o644}
	for p, data := range extra {
		fsys[name+"/"+p] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
	}
}

// syncNoPanic runs a sync and turns a panic into a test failure that
// says what the panic was.
func syncNoPanic(t *testing.T, e *Engine) (report *SyncReport, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Engine.Sync panicked: %v", p)
		}
	}()
	return e.Sync(context.Background(), SyncOptions{})
}

// TestSyncWithAFailingEmbeddedFS: an embedded file system whose Open,
// Read and ReadFile fail for some files never makes Engine.Sync panic or
// stop: the other skills and sources are written to the cache and the
// target, the lock and the audit log are written, and each bad skill is a
// problem naming its file. A bad skill synced before keeps its last good
// files.
func TestSyncWithAFailingEmbeddedFS(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{}
	embeddedSkill(fsys, "good", "# good\n", map[string]string{"ref.md": "fine\n"})
	embeddedSkill(fsys, "no-open", "# no-open\n", map[string]string{"data.txt": "version one\n"})
	embeddedSkill(fsys, "no-read", "# no-read\n", map[string]string{"big.bin": "version one\n"})
	embeddedSkill(fsys, "zzz-last", "# last\n", nil)
	on := &atomic.Bool{}
	faulty := &faultyFS{fsys: fsys, on: on, failOpen: "no-open/data.txt", failRead: "no-read/big.bin"}

	cfg, ws := workspaceConfig(t, "repositories:\n  - embedded: builtin\n  - name: app\n    embedded: app\ntargets:\n  - dir: .claude/skills\n", "app")
	var warnings []string
	e := NewEngine(cfg, WithEmbedded("app", faulty), WithGitStore(filepath.Join(ws, ".git-store")),
		WithWarnings(func(w string) { warnings = append(warnings, w) }))
	cache, target := filepath.Join(ws, workspace.CacheName), filepath.Join(ws, ".claude", "skills")

	// First sync with the faults on: the bad skills were never written.
	on.Store(true)
	r, err := syncNoPanic(t, e)
	if !errors.Is(err, ErrPartial) || r.Sources[1].Status != StatusPartial {
		t.Fatalf("sync with two bad skills = %v %+v, want ErrPartial and app partial", err, r.Sources)
	}
	checkBad := func(when string, r *SyncReport) {
		t.Helper()
		bad := map[string]string{}
		for _, p := range r.Problems {
			if p.Rule == "skill-unwritable" {
				bad[p.Skill] = p.Path
				if p.Source != "app" || !strings.Contains(p.Message, "injected fault") {
					t.Errorf("%s: problem %+v", when, p)
				}
			}
		}
		if bad["no-open"] != "data.txt" || bad["no-read"] != "big.bin" || len(bad) != 2 {
			t.Errorf("%s: unwritable skills = %v, want no-open data.txt and no-read big.bin; problems %+v", when, bad, r.Problems)
		}
		for _, s := range r.Sources {
			if s.Status == StatusFailed {
				t.Errorf("%s: source %s failed for one bad skill: %s", when, s.Source, s.Error)
			}
		}
		for _, p := range []string{"app/good/ref.md", "app/zzz-last/SKILL.md", "builtin/skillsync/SKILL.md"} {
			if !skilltest.Exists(filepath.Join(cache, p)) {
				t.Errorf("%s: the cache lacks %s", when, p)
			}
		}
		for _, p := range []string{"good/ref.md", "zzz-last/SKILL.md", "skillsync/SKILL.md"} {
			if !skilltest.Exists(filepath.Join(target, p)) {
				t.Errorf("%s: the target lacks %s", when, p)
			}
		}
		locked := readLockFile(t, ws)
		if locked.Sources["app"] == nil || locked.Sources["app"].Skills["good"] == "" || locked.Sources["builtin"] == nil {
			t.Errorf("%s: lock = %+v", when, locked.Sources)
		}
	}
	checkBad("first sync", r)
	for _, p := range []string{"app/no-open", "app/no-read"} {
		if skilltest.Exists(filepath.Join(cache, p)) {
			t.Errorf("a skill that could not be staged is in the cache: %s", p)
		}
	}
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) != 0 {
		t.Errorf("verify after a sync with bad skills: %v %v", diffs, err)
	}
	events, _, _ := e.Audit().Read(time.Time{}, "added")
	var added []string
	for _, ev := range events {
		added = append(added, ev.Target)
	}
	if !slices.Contains(added, "app/good") || slices.Contains(added, "app/no-open") {
		t.Errorf("audit added = %v", added)
	}

	// The faults go away: every skill is written.
	on.Store(false)
	if r, err := syncNoPanic(t, e); err != nil || len(r.Problems) != 0 {
		t.Fatalf("sync without faults: %v %+v", err, r.Problems)
	}
	// A new version of everything, and the faults back: the bad skills
	// keep their last good files, the others move on.
	for _, name := range []string{"good", "no-open", "no-read", "zzz-last"} {
		embeddedSkill(fsys, name, "# version two\n", nil)
	}
	fsys["no-open/data.txt"].Data = []byte("version two\n")
	fsys["no-read/big.bin"].Data = []byte("version two\n")
	on.Store(true)
	r, err = syncNoPanic(t, e)
	if !errors.Is(err, ErrPartial) {
		t.Fatalf("second sync with faults = %v, want ErrPartial", err)
	}
	checkBad("second sync", r)
	for _, p := range []string{"no-open/data.txt", "no-read/big.bin"} {
		for _, dir := range []string{filepath.Join(cache, "app"), target} {
			if data, _ := os.ReadFile(filepath.Join(dir, p)); string(data) != "version one\n" {
				t.Errorf("%s lost its last good file: %q", filepath.Join(dir, p), data)
			}
		}
	}
	for _, dir := range []string{filepath.Join(cache, "app"), target} {
		if data, _ := os.ReadFile(filepath.Join(dir, "good", "SKILL.md")); !strings.Contains(string(data), "version two") {
			t.Errorf("%s/good did not move on: %q", dir, data)
		}
	}
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}

// TestSyncManyBadSkillsNeverPanics: more skills fail than there are
// warnings, in several sources at once, which a report reconciled by
// index could not survive.
func TestSyncManyBadSkillsNeverPanics(t *testing.T) {
	t.Parallel()
	on := &atomic.Bool{}
	on.Store(true)
	var opts []Option
	var names []string
	text := "repositories:\n"
	for i := range 3 {
		fsys := fstest.MapFS{}
		for j := range 4 {
			embeddedSkill(fsys, fmt.Sprintf("s%d-%d", i, j), "# body\n", map[string]string{"f.txt": "x\n"})
		}
		name := fmt.Sprintf("app%d", i)
		// In each source every skill but the last cannot be read.
		f := &faultyFS{fsys: fsys, on: on, failOpen: fmt.Sprintf("s%d-0/f.txt", i), failRead: fmt.Sprintf("s%d-1/f.txt", i)}
		opts, names = append(opts, WithEmbedded(name, f)), append(names, name)
		text += "  - name: " + name + "\n    embedded: " + name + "\n"
	}
	cfg, _ := workspaceConfig(t, text, names...)
	e := NewEngine(cfg, append(opts, WithWarnings(func(string) {}))...)
	r, err := syncNoPanic(t, e)
	if !errors.Is(err, ErrPartial) {
		t.Fatalf("sync with unwritable skills = %v, want ErrPartial", err)
	}
	n := 0
	for _, p := range r.Problems {
		if p.Rule == "skill-unwritable" {
			n++
		}
	}
	if n != 6 || len(r.Skills.Added) != 6 {
		t.Errorf("%d unwritable, added %v; want 6 and 6", n, r.Skills.Added)
	}
}

func readLockFile(t *testing.T, ws string) *lock.File {
	t.Helper()
	l, ok, err := lock.Read(filepath.Join(ws, workspace.LockName), Kinds())
	if err != nil || !ok {
		t.Fatalf("read the lock: %v %v", ok, err)
	}
	return l
}
