// Package buildtest builds a program once for the tests that run it as
// processes of their own (kills, many processes at once), into the
// user's cache folder, where it stays: go build links it again only when
// its code changed (linking the skillsync binary costs about 6 s of CPU,
// the sync child 4 s, on every go test run that used to build them into
// a temporary folder), and is not run at all when nothing it reads has
// changed since the last build (a go build that finds its target
// current still costs a second of CPU, and reading the program to pin
// it another under -race).
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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/platform"
)

// Program is one package main, built on first use.
type Program struct {
	pkg  string
	once sync.Once
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
	dir, root, err := cacheDir(p.pkg)
	if err != nil {
		return "", err
	}
	// The lock only saves work: a build that cannot take it builds all
	// the same. One lock per user, as each has a build cache of its own.
	lockPath := filepath.Join(os.TempDir(), fmt.Sprintf("skillsync-buildtest-%d.lock", os.Getuid()))
	if lock, err := flock.Acquire(context.Background(), lockPath, buildWait); err == nil {
		defer lock.Close()
	}
	// go build leaves a target whose build ID matches what it would
	// build as it is: the second test binary that asks, and the next
	// go test run of unchanged code, link nothing. It does not write
	// over a program that is running (it moves it aside first).
	path := filepath.Join(dir, filepath.Base(p.pkg))
	// A go build that finds its target current still costs about a
	// second of CPU (it loads and hashes the whole build graph), and two
	// programs are asked for on every go test run: when nothing the build
	// reads has changed since the last one (stamp), its pin is used as
	// it is.
	stampFile := path + ".stamp"
	st, stampErr := stamp(root, p.pkg)
	if stampErr == nil {
		if pinned, ok := stamped(stampFile, st, filepath.Join(dir, "pinned")); ok {
			return pinned, nil
		}
	}
	// Built as release/build.sh builds what ships: without cgo, a static
	// program that does not start the dynamic loader and libc first.
	cmd := exec.Command("go", "build", "-o", path, p.pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	pinned, err := pin(dir, path)
	if err != nil {
		return "", err
	}
	if stampErr == nil {
		// Where it cannot be written, the next run builds again.
		_ = atomicWrite(stampFile, st+"\n"+pinned+"\n")
	}
	return pinned, nil
}

// stamp returns a digest of what a go build of pkg in the module at root
// reads: the toolchain (its version, and the go command's file), the
// environment's GO and CGO variables and go env -w's file, every file of the module git does
// not ignore (sources, embedded files, go.mod and go.sum, which fix the
// dependencies' content) and any go.work above it. Two builds with one
// stamp make the same program.
func stamp(root, pkg string) (string, error) {
	h := sha256.New()
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	info, err := os.Stat(goBin)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\n%s\n%s\n%d %d\n", pkg, runtime.Version(), goBin, info.Size(), info.ModTime().UnixNano())
	env := os.Environ()
	sort.Strings(env)
	for _, kv := range env {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "CGO_") {
			fmt.Fprintf(h, "env %q\n", kv)
		}
	}
	// The settings go env -w wrote (GOFLAGS among them) are not in the
	// environment.
	goEnv := os.Getenv("GOENV")
	if config, err := os.UserConfigDir(); goEnv == "" && err == nil {
		goEnv = filepath.Join(config, "go", "env")
	}
	if data, err := os.ReadFile(goEnv); err == nil {
		fmt.Fprintf(h, "go env %d\n", len(data))
		h.Write(data)
	}
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		if data, err := os.ReadFile(filepath.Join(dir, "go.work")); err == nil {
			fmt.Fprintf(h, "go.work %s %d\n", dir, len(data))
			h.Write(data)
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	// The module's files as git lists them, tracked or not, the ignored
	// left out: bench/run.sh leaves gigabytes in bench/out that no build
	// reads. Without git, no stamp: the program is built.
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Errorf("list the module's files: %w", err)
	}
	names := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	sort.Strings(names)
	for _, rel := range names {
		if err := hashFile(h, root, rel); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile writes the module's file rel (its name, mode, size and
// content, or a link's target) to h.
func hashFile(h io.Writer, root, rel string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	info, err := os.Lstat(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%q %v %d\n", rel, info.Mode(), info.Size())
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "-> %q\n", target)
	case info.Mode().IsRegular():
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
	}
	return nil
}

// stamped returns the pinned program the stamp file names when its
// stamp is st and the pin is still there, in the folder pins (pins
// unused for a day are pruned), marking the pin used.
func stamped(stampFile, st, pins string) (string, bool) {
	data, err := os.ReadFile(stampFile)
	if err != nil {
		return "", false
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != st || !filepath.IsAbs(lines[1]) {
		return "", false
	}
	if rel, err := filepath.Rel(pins, lines[1]); err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	info, err := os.Stat(lines[1])
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Dir(lines[1]), now, now)
	return lines[1], true
}

// atomicWrite writes data to path through a temporary file renamed into
// place, so that a reader sees the old file or the new one.
func atomicWrite(path, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// keepPinned is how long a pinned program nobody asked for is kept.
const keepPinned = 24 * time.Hour

// pin returns a path to the program as built now that no later build
// writes over: a copy named by the program's content (not a hard link:
// where go build cannot rename, it rewrites its target in place).
// Another go test run of other code in this folder relinks the build
// target, while this run's tests still start processes from their path
// for minutes. Pins unused for a day are removed.
func pin(dir, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	pinned := filepath.Join(dir, "pinned", hex.EncodeToString(sum[:12]), filepath.Base(path))
	if _, err := os.Stat(pinned); err != nil {
		if err := os.MkdirAll(filepath.Dir(pinned), 0o700); err != nil {
			return "", err
		}
		tmp := pinned + ".tmp"
		if err := WriteProgram(tmp, data, 0o700); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, pinned); err != nil {
			return "", err
		}
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Dir(pinned), now, now)
	prune(filepath.Join(dir, "pinned"), now)
	return pinned, nil
}

// prune removes the pins not used for keepPinned.
func prune(dir string, now time.Time) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > keepPinned {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// cacheDir is the folder that keeps pkg's program between test binaries
// and runs: one per program and module folder, so that two copies of
// the module (worktrees) do not build over each other's. It is in the
// user's cache folder (the temporary folder when there is none).
func cacheDir(pkg string) (dir, root string, err error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	root = wd
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			root = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	sum := sha256.Sum256([]byte(root + "\x00" + pkg))
	dir = filepath.Join(base, "skillsync-buildtest", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	// The tests run what the folder holds (a pin, or the one a stamp
	// names): in a folder another user may write, as a shared temporary
	// folder is, what they planted. There the program is built into a
	// folder of this process's own, and nothing is kept between runs
	// (the folder is left to the system's cleaning of its temporary
	// files: no test owns the build).
	if !platform.PrivateDir(dir) || !platform.PrivateDir(filepath.Dir(dir)) {
		dir, err = os.MkdirTemp("", "skillsync-buildtest-")
		if err != nil {
			return "", "", err
		}
	}
	return dir, root, nil
}
