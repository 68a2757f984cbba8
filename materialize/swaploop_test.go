package materialize

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestSwapLoopNeverWritesOutside: while syncs of a target and of a
// cache run one after another (each changing every skill, adding and
// removing one), another goroutine flips, in a loop, a folder on the way
// and folders inside the destination (a skill's folder, a folder of a
// skill, the staging folder, the conflicts folder) between a real
// folder and a symbolic link to a folder elsewhere. Whatever moment a
// flip lands, nothing where the links lead ever changes.
func TestSwapLoopNeverWritesOutside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves a destination by path (docs/platforms.md)")
	}
	if testing.Short() {
		t.Skip("runs syncs for a while")
	}
	t.Parallel()
	version := func(v int) map[string]map[string]string {
		set := map[string]map[string]string{}
		for i := range 6 {
			name := fmt.Sprintf("s%d", i)
			set[name] = map[string]string{
				"SKILL.md": fmt.Sprintf("---\nname: %s\ndescription: D.\n---\nv%d\n", name, v),
				"ref/a.md": fmt.Sprintf("a%d", v), "ref/b.md": "b", "c.md": fmt.Sprintf("c%d", v%3),
			}
		}
		set[fmt.Sprintf("extra%d", v%2)] = map[string]string{"SKILL.md": "x"}
		return set
	}
	// flipper swaps each of paths, in turn, for a link to outside and
	// back, until stop is closed.
	flipper := func(t *testing.T, outside string, paths []string, stop chan struct{}, done *sync.WaitGroup) {
		done.Add(1)
		go func() {
			defer done.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := paths[i%len(paths)]
				aside := p + ".flip"
				if os.Rename(p, aside) != nil {
					runtime.Gosched()
					continue
				}
				if os.Symlink(outside, p) == nil {
					time.Sleep(time.Duration(i%5) * 50 * time.Microsecond)
					_ = os.Remove(p)
				}
				_ = os.Rename(aside, p)
			}
		}()
	}
	// outsideFolder is a folder holding what a write through any of the
	// links would need: folders of every name the syncs use.
	outsideFolder := func(t *testing.T) string {
		o := t.TempDir()
		for _, d := range []string{"skills", "src", "s0", "s1", "ref", "agent", targetStaging, stagingName, ConflictsName} {
			if err := os.MkdirAll(filepath.Join(o, d, "ref"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(o, "s0", "SKILL.md"), []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
		return o
	}
	const rounds = 40

	t.Run("target", func(t *testing.T) {
		t.Parallel()
		ws, outside := t.TempDir(), outsideFolder(t)
		dir := filepath.Join(ws, ".claude", "skills")
		skills := func(set map[string]map[string]string) []TargetSkill {
			var out []TargetSkill
			for name, files := range set {
				out = append(out, TargetSkill{Skill: mkSkill(name, files)})
			}
			return out
		}
		ctx := context.Background()
		if _, err := SyncTarget(ctx, Target{Dir: dir, Skills: skills(version(0)), Workspace: ws, Root: ws}); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, outside)
		stop := make(chan struct{})
		var done sync.WaitGroup
		flipper(t, outside, []string{
			filepath.Join(ws, ".claude"), filepath.Join(dir, "s0"), filepath.Join(dir, "s1", "ref"),
			filepath.Join(dir, targetStaging), filepath.Join(dir, ConflictsName),
		}, stop, &done)
		for v := 1; v <= rounds; v++ {
			// Errors and refusals are expected: the flips make the
			// target a link at times. Only what is outside matters.
			_, _ = SyncTarget(ctx, Target{Dir: dir, Skills: skills(version(v)), Workspace: ws, Root: ws, Wait: time.Second})
		}
		close(stop)
		done.Wait()
		if after := snapshot(t, outside); !maps.Equal(before, after) {
			t.Fatalf("changed where the links lead:\nbefore %v\nafter  %v", before, after)
		}
	})

	t.Run("cache", func(t *testing.T) {
		t.Parallel()
		ws, outside := t.TempDir(), outsideFolder(t)
		root := filepath.Join(ws, ".skills-cache")
		syncOnce(t, root, "r0", skillsOf(version(0))...)
		before := snapshot(t, outside)
		stop := make(chan struct{})
		var done sync.WaitGroup
		flipper(t, outside, []string{
			filepath.Join(root, "src"), filepath.Join(root, "src", "s0"), filepath.Join(root, "src", "s1", "ref"),
			filepath.Join(root, stagingName),
		}, stop, &done)
		ctx := context.Background()
		for v := 1; v <= rounds; v++ {
			c, err := OpenCache(ctx, root, time.Second, CheckRecord)
			if err != nil {
				continue
			}
			c.SyncSource(ctx, Source{Name: "src", Revision: fmt.Sprint(v), Skills: skillsOf(version(v))})
			_ = c.Commit(ctx)
			c.Close()
		}
		close(stop)
		done.Wait()
		if after := snapshot(t, outside); !maps.Equal(before, after) {
			t.Fatalf("changed where the links lead:\nbefore %v\nafter  %v", before, after)
		}
	})
}

func skillsOf(set map[string]map[string]string) []Skill {
	var out []Skill
	for name, files := range set {
		out = append(out, mkSkill(name, files))
	}
	return out
}

// TestSyncsLeakNoDescriptor: many syncs of a target and of a cache,
// with updates, removals and a link planted below the target, leave as
// many descriptors open as there were before them.
func TestSyncsLeakNoDescriptor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	// Not parallel: other tests' descriptors would be counted.
	count := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	ctx := context.Background()
	ws, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, ".claude", "skills")
	root := filepath.Join(ws, ".skills-cache")
	round := func(v int) {
		var ts []TargetSkill
		for _, s := range skillsOf(map[string]map[string]string{
			"a": {"SKILL.md": fmt.Sprint(v), "ref/x.md": "x"}, fmt.Sprintf("b%d", v%2): {"SKILL.md": "b"},
		}) {
			ts = append(ts, TargetSkill{Skill: s})
		}
		_, _ = SyncTarget(ctx, Target{Dir: dir, Skills: ts, Workspace: ws, Root: ws})
		c, err := OpenCache(ctx, root, time.Second, CheckRecord)
		if err != nil {
			t.Fatal(err)
		}
		c.SyncSource(ctx, Source{Name: "src", Revision: fmt.Sprint(v), Skills: skillsOf(map[string]map[string]string{"a": {"SKILL.md": fmt.Sprint(v)}})})
		_ = c.Commit(ctx)
		c.Close()
		// A link planted below the target: refused, not followed.
		_ = os.Symlink(outside, filepath.Join(dir, "a", "ref", "link"))
	}
	round(0)
	runtime.GC()
	before := count()
	for v := 1; v <= 60; v++ {
		round(v)
	}
	runtime.GC()
	if after := count(); after > before {
		t.Fatalf("%d descriptors open after 60 syncs, %d before", after, before)
	}
}
