// Package buildtest builds a program once for the tests that run it as
// processes of their own (kills, many processes at once).
//
// The program is built without -race, whatever the test binary was built
// with: a race-built process starts and runs several times slower, and a
// test that starts hundreds of them spent most of the suite's time there.
// What those tests assert (a killed sync leaves whole skills, concurrent
// processes lose no count) does not depend on the detector; the data races
// within one process are the in-process tests' to find, and they still run
// under -race.
package buildtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
)

// Program is one package main, built on first use.
type Program struct {
	pkg  string
	once sync.Once
	dir  string
	path string
	err  error
}

// New names the program by its import path; nothing is built yet.
func New(pkg string) *Program {
	return &Program{pkg: pkg}
}

// buildWait is how long a build waits for another test binary's build:
// go test runs packages at once, and two go builds of one dependency
// graph side by side would each compile it, where the second one in
// line finds the first one's work in the build cache.
const buildWait = 20 * time.Minute

// Path builds the program the first time it is asked for and returns
// the executable's path. A failed build fails every test that asks.
func (p *Program) Path(t testing.TB) string {
	t.Helper()
	p.once.Do(func() { p.path, p.err = p.build() })
	if p.err != nil {
		t.Fatalf("build %s: %v", p.pkg, p.err)
	}
	return p.path
}

func (p *Program) build() (string, error) {
	dir, err := os.MkdirTemp("", "skillsync-buildtest")
	if err != nil {
		return "", err
	}
	p.dir = dir
	// The lock only saves work: a build that cannot take it builds all
	// the same. One lock per user, as each has a build cache of its own.
	lockPath := filepath.Join(os.TempDir(), fmt.Sprintf("skillsync-buildtest-%d.lock", os.Getuid()))
	if lock, err := flock.Acquire(context.Background(), lockPath, buildWait); err == nil {
		defer lock.Close()
	}
	path := filepath.Join(dir, filepath.Base(p.pkg))
	cmd := exec.Command("go", "build", "-o", path, p.pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	return path, nil
}

// Close removes what Path built. TestMain calls it after m.Run.
func (p *Program) Close() {
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}
