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
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/workspace"
)

// childEnv makes the test binary run one sync of the config it names and
// exit, for tests that kill a sync from outside.
const childEnv = "SKILLSYNC_TEST_SYNC_CONFIG"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(childSync(path))
	}
	os.Exit(m.Run())
}

func childSync(path string) int {
	cfg, err := config.Load(path, Kinds())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg.Global = ""
	if _, err := NewEngine(cfg).Sync(context.Background(), SyncOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// version is one upstream state: skill name -> file path -> content.
type version map[string]map[string]string

// twoVersions builds two states of a source where every skill differs,
// files come and go, and some skills exist in one state only.
func twoVersions(skills int) (version, version) {
	a, b := version{}, version{}
	for i := 0; i < skills; i++ {
		name := fmt.Sprintf("skill-%03d", i)
		for v, ver := range []version{a, b} {
			if (i%10 == 0 && v == 1) || (i%10 == 1 && v == 0) {
				continue // present in one version only
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
	a, b := twoVersions(150)
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
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+config)
		return cmd
	}
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

	seed := uint64(time.Now().UnixNano())
	t.Logf("a full sync took %s; kill delays drawn with seed %d", span, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	cache := filepath.Join(ws, workspace.CacheName, "team")
	killedRunning := 0
	for i := 0; i < 50; i++ {
		point([]string{dirA, dirB}[i%2])
		cmd := child()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span + span/4))))
		if cmd.Process.Signal(syscall.SIGKILL) == nil {
			if err := cmd.Wait(); err != nil {
				killedRunning++
			}
		} else {
			_ = cmd.Wait()
		}
		checkWhole(t, cache, a, b)
	}
	t.Logf("%d of 50 syncs were killed while running", killedRunning)
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
