package skillsync

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/buildtest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/internal/testmain"
	"github.com/skillsync/skillsync/workspace"
)

// syncChild runs one sync of the config file it is given, as a process
// of its own that TestSyncSurvivesSIGKILL kills. It is built without
// -race: a race-built sync runs several times slower, and what the kills
// check (every skill whole, the next sync repairs) does not depend on the
// detector; TestReadersNeverSeeAMix and the other in-process syncs run
// the same code under it.
var syncChild = buildtest.New("github.com/skillsync/skillsync/internal/buildtest/syncchild")

// TestMain runs the tests as internal/testmain says.
func TestMain(m *testing.M) { testmain.Main(m) }

// version is one upstream state: skill name -> file path -> content.
type version map[string]map[string]string

// twoVersions builds two states of a source where every skill differs,
// files come and go, and some skills exist in one state only. A third
// of the skills differ by one file, so both ways a sync puts a new
// version in (a whole new folder, one file patched) are taken.
func twoVersions(skills int) (version, version) {
	a, b := version{}, version{}
	for i := 0; i < skills; i++ {
		name := fmt.Sprintf("skill-%03d", i)
		for v, ver := range []version{a, b} {
			if (i%10 == 0 && v == 1) || (i%10 == 1 && v == 0) {
				continue // present in one version only
			}
			if i%6 == 2 || i%6 == 4 {
				// Versions one file apart, which a sync patches in place
				// (materialize/patch.go): one file edited, added or removed.
				ver[name] = oneFileApart(name, i, v)
				continue
			}
			files := map[string]string{
				"SKILL.md": fmt.Sprintf("---\nname: %s\ndescription: Version %d of skill %d.\n---\n# %s\n", name, v, i, name),
			}
			for f := 0; f < 5; f++ {
				files[fmt.Sprintf("references/part-%d.md", f)] = strings.Repeat(fmt.Sprintf("v%d %s %d\n", v, name, f), 40+i%50)
			}
			if v == 1 && i%3 == 0 {
				delete(files, "references/part-4.md")
				files["scripts/new.sh"] = "#!/bin/sh\necho v1\n"
			}
			ver[name] = files
		}
	}
	return a, b
}

// oneFileApart is version v of skill i where the two versions differ by
// one file: part-0 edited, extra.md added, or part-3 removed.
func oneFileApart(name string, i, v int) map[string]string {
	files := map[string]string{
		"SKILL.md": fmt.Sprintf("---\nname: %s\ndescription: Skill %d.\n---\n# %s\n", name, i, name),
	}
	for f := 0; f < 5; f++ {
		files[fmt.Sprintf("references/part-%d.md", f)] = strings.Repeat(fmt.Sprintf("%s %d\n", name, f), 40+i%50)
	}
	if v == 1 {
		switch i % 12 {
		case 2, 8:
			files["references/part-0.md"] = strings.Repeat(fmt.Sprintf("v1 %s 0\n", name), 30+i%50)
		case 4:
			files["references/extra.md"] = "added in v1\n"
		default:
			delete(files, "references/part-3.md")
		}
	}
	return files
}

func writeVersion(t *testing.T, dir string, v version) {
	t.Helper()
	for name, files := range v {
		skilltest.Write(t, filepath.Join(dir, name), files)
	}
}

// readSkill reads a skill directory through one directory handle, the way
// a careful reader does: every file relative to the directory it opened.
func readSkill(dir string) (map[string]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	got := map[string]string{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root.FS(), p)
		got[p] = string(data)
		return err
	})
	return got, err
}

// checkWhole fails when a live skill directory is not exactly one version.
func checkWhole(t *testing.T, cache string, a, b version) {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		return // nothing synced yet
	}
	for _, e := range entries {
		got, err := readSkill(filepath.Join(cache, e.Name()))
		if err != nil {
			t.Fatalf("read %s: %v", e.Name(), err)
		}
		if !maps.Equal(got, a[e.Name()]) && !maps.Equal(got, b[e.Name()]) {
			t.Fatalf("%s is neither version: %d files", e.Name(), len(got))
		}
	}
}

func TestSyncSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills 50 syncs")
	}
	// 60 skills, as TestReadersNeverSeeAMix flips: each of the 50 kill
	// slices below spans about one skill's swap. With 150 the kills were
	// as many and as spread, over a sync three times as long to wait for.
	a, b := twoVersions(60)
	dirA, dirB, ws := t.TempDir(), t.TempDir(), t.TempDir()
	writeVersion(t, dirA, a)
	writeVersion(t, dirB, b)
	config := filepath.Join(ws, config.FileName)
	point := func(dir string) {
		data := "repositories:\n  - name: team\n    dir: " + dir + "\n"
		if err := os.WriteFile(config, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := syncChild.Path(t)
	child := func() *exec.Cmd { return exec.Command(bin, config) }
	// One whole flip, to learn how long a sync takes here.
	point(dirA)
	if out, err := child().CombinedOutput(); err != nil {
		t.Fatalf("first sync: %v\n%s", err, out)
	}
	point(dirB)
	start := time.Now()
	if out, err := child().CombinedOutput(); err != nil {
		t.Fatalf("second sync: %v\n%s", err, out)
	}
	span := time.Since(start)

	// The kill moments are spread over the sync and a quarter after it:
	// kill i falls in its own slice of that span, at a random place in
	// the slice, and the slices are taken in random order, so every part
	// of the sync (fetch, staging, the swap of each skill, the lock and
	// record writes) is hit, not only where random draws happen to bunch.
	const kills = 50
	seed := uint64(time.Now().UnixNano())
	t.Logf("a full sync took %s; kill moments drawn with seed %d", span, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	window := span + span/4
	slices := rng.Perm(kills)
	cache := filepath.Join(ws, workspace.CacheName, "team")
	killedRunning := 0
	for i := 0; i < kills; i++ {
		point([]string{dirA, dirB}[i%2])
		cmd := child()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		at := (float64(slices[i]) + rng.Float64()) / kills
		time.Sleep(time.Duration(at * float64(window)))
		if cmd.Process.Signal(syscall.SIGKILL) == nil {
			if err := cmd.Wait(); err != nil {
				killedRunning++
			}
		} else {
			_ = cmd.Wait()
		}
		checkWhole(t, cache, a, b)
	}
	t.Logf("%d of %d syncs were killed while running", killedRunning, kills)
	if killedRunning < 5 {
		t.Errorf("only %d kills landed during a sync: the test did not exercise crashes", killedRunning)
	}
	if out, err := child().CombinedOutput(); err != nil {
		t.Fatalf("the sync after the kills failed: %v\n%s", err, out)
	}
	checkWhole(t, cache, a, b)
	e := reload(t, config)
	if diffs, err := e.Verify(context.Background()); err != nil || len(diffs) != 0 {
		t.Fatalf("verify after the kills: %v %v", diffs, err)
	}
}

func TestReadersNeverSeeAMix(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("flips the cache 10 times")
	}
	a, b := twoVersions(60)
	dirA, dirB, ws := t.TempDir(), t.TempDir(), t.TempDir()
	writeVersion(t, dirA, a)
	writeVersion(t, dirB, b)
	engine := func(dir string) *Engine {
		path := filepath.Join(t.TempDir(), config.FileName)
		data := "workspace: " + ws + "\nrepositories:\n  - name: team\n    dir: " + dir + "\n"
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return reload(t, path)
	}
	engines := []*Engine{engine(dirA), engine(dirB)}
	mustSync(t, engines[0], SyncOptions{})

	cache := filepath.Join(ws, workspace.CacheName, "team")
	var names []string
	for n := range a {
		names = append(names, n)
	}
	var seen, mixed atomic.Int64
	var firstMix atomic.Value
	done := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for {
				select {
				case <-done:
					return
				default:
				}
				name := names[rng.IntN(len(names))]
				got, err := readSkill(filepath.Join(cache, name))
				if err != nil {
					continue // the skill is between versions or gone: read again
				}
				seen.Add(1)
				if !maps.Equal(got, a[name]) && !maps.Equal(got, b[name]) {
					mixed.Add(1)
					firstMix.CompareAndSwap(nil, name)
				}
			}
		}(r)
	}
	for i := 1; i <= 10; i++ {
		mustSync(t, engines[i%2], SyncOptions{})
	}
	close(done)
	wg.Wait()
	t.Logf("readers saw %d whole skills", seen.Load())
	if mixed.Load() > 0 {
		t.Fatalf("readers saw %d mixed skills, first %v", mixed.Load(), firstMix.Load())
	}
	if seen.Load() == 0 {
		t.Fatal("the readers read nothing")
	}
}

// TestSyncRemovesAKilledSyncsTemporaryFiles: the temporary files a sync
// killed before a rename leaves (beside the manifest and the targets list
// in the cache, the record and the marker in a target, the lock in the
// workspace) are removed by a later sync, with no warning that they are
// not skillsync's. A temporary lock file younger than a live write could
// be stays: the lock is written without the cache's lock held.
func TestSyncRemovesAKilledSyncsTemporaryFiles(t *testing.T) {
	t.Parallel()
	cfg, ws := workspaceConfig(t, "targets:\n  - dir: .claude/skills\n")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "The notes skill.", nil)
	var warnings []string
	e := NewEngine(cfg, WithWarnings(func(w string) { warnings = append(warnings, w) }))
	mustSync(t, e, SyncOptions{})
	cache, target := filepath.Join(ws, ".skills-cache"), filepath.Join(ws, ".claude", "skills")
	old := time.Now().Add(-time.Hour)
	left := []string{
		filepath.Join(cache, "..manifest.json.tmp-0123456789abcdef"),
		filepath.Join(cache, "..targets.json.tmp-0123456789abcdef"),
		filepath.Join(target, "..skillsync.json.tmp-0123456789abcdef"),
		filepath.Join(target, "..skillsync-dirty.tmp-0123456789abcdef"),
		filepath.Join(ws, ".skillsync.lock.tmp-0123456789abcdef"),
	}
	fresh := filepath.Join(ws, ".skillsync.lock.tmp-fedcba9876543210")
	for _, p := range append(left, fresh) {
		skilltest.WriteFile(t, p, "half")
	}
	if err := os.Chtimes(left[4], old, old); err != nil {
		t.Fatal(err)
	}
	// The target's marker says a sync stopped halfway there.
	skilltest.WriteFile(t, filepath.Join(target, ".skillsync-dirty"), "stopped\n")
	warnings = nil
	mustSync(t, e, SyncOptions{})
	for _, p := range left {
		if skilltest.Exists(p) {
			t.Errorf("%s is left", p)
		}
	}
	if !skilltest.Exists(fresh) {
		t.Errorf("a temporary lock file a live sync may be writing was removed")
	}
	for _, w := range warnings {
		if strings.Contains(w, ".tmp-") {
			t.Errorf("warned: %s", w)
		}
	}
	// Without the marker, a sync that changes the target sweeps it too.
	skilltest.WriteFile(t, left[2], "half")
	skilltest.Skill(t, filepath.Join(ws, "skills"), "notes", "The notes skill, changed.", nil)
	mustSync(t, e, SyncOptions{})
	if skilltest.Exists(left[2]) {
		t.Errorf("%s is left after a sync that changed the target", left[2])
	}
}
