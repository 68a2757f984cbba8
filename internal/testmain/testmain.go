// Package testmain starts a package's tests: without the race
// detector's pause at exit, with at least four parallel tests at once,
// and with a way for a test that measures the whole process to run in a
// process of its own.
//
// A program built with -race sleeps one second when it exits with status
// 0 (ThreadSanitizer's atexit_sleep_ms, 1000 by default), to give threads
// still running a last chance to report a race. For a test binary that
// second is idle: the testing package has already failed the run if the
// detector reported anything, during a test or outside one, before it
// returns from m.Run (the pause could only add a race in a goroutine
// that outlives every test, in the second after they end). With 45 test
// binaries, `go test -race ./...` spent 45 s of its 2 package slots
// sleeping. Every package's TestMain calls Main (or Setup first, when it
// has work of its own to do), so the plain `go test -race ./...` runs
// without the pause. Main ends a passing run with the exit system call
// itself, which skips the detector's finalization and its pause (the
// testing package has made its last check for races); Setup, whose
// caller runs code of its own after the tests, re-executes the binary
// once with GORACE=atexit_sleep_ms=0 instead, so a race in that code
// still fails the run. GORACE's other options, and an atexit_sleep_ms
// the caller sets, are kept.
//
// go test runs as many parallel tests at once as there are CPUs (its
// -parallel flag), which suits tests that compute. Many of these wait:
// on a server, a daemon, a child process, a retry. On a 2-core machine
// two such tests held both places and the package's other tests waited
// behind them with the CPUs idle, so Setup raises the default to
// minParallel; a -parallel given on the command line is kept.
//
// The tests' temporary folders (t.TempDir, and the processes they start)
// go to a folder of their own in /dev/shm where that is a tmpfs with
// room, unless TMPDIR says where. A sync ends with a syncfs, and a use
// appends to a journal with an fsync: on a disk each waits for the
// device, and syncfs writes back whatever else is pending there (the
// test binaries go test links). The same three heaviest packages took
// 246 s on ext4 and 167 s with their temporary files in RAM, at the same
// load; no assertion depends on which file system holds them (crash
// tests kill processes, and a process's writes outlive it in the page
// cache either way).
package testmain

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// minParallel is the fewest parallel tests a test binary runs at once
// when the command line does not say.
const minParallel = 4

// Main runs the tests as Setup prepares them, and exits without the
// race detector's pause: a package's TestMain with nothing else to do is
// `func TestMain(m *testing.M) { testmain.Main(m) }`.
func Main(m *testing.M) {
	prepare()
	exit(m.Run())
}

// exit ends the process with code. A passing run of a -race binary ends
// with the exit system call, not os.Exit: os.Exit(0) runs the race
// detector's finalization, which sleeps atexit_sleep_ms (a second unless
// GORACE says otherwise) and then fails the process if a race was
// reported. m.Run has already failed the run on any race reported during
// it, in a test or outside one, so what is skipped is the pause. Saving
// it this way, instead of re-executing the binary with GORACE set as
// Setup does, spares each test binary a second start (0.1 s of CPU on
// the project's machine). A run with coverage (whose counters are
// written at exit) and a run whose GORACE sets atexit_sleep_ms end with
// os.Exit.
func exit(code int) {
	if code == 0 && raceEnabled && testing.CoverMode() == "" && !pauseSet(os.Environ()) {
		syscall.Exit(0)
	}
	os.Exit(code)
}

// pauseSet reports whether env's GORACE sets atexit_sleep_ms.
func pauseSet(env []string) bool {
	_, ok := withoutPause(env)
	return !ok
}

// Setup prepares the test binary; a TestMain of its own calls it first.
// It parses the command line's flags, as m.Run would. It re-executes a
// race-built binary without the detector's pause at exit (noExitPause),
// as the code the TestMain runs after m.Run may still race.
func Setup() {
	noExitPause()
	prepare()
}

// prepare is Setup without the re-execution.
func prepare() {
	if os.Getenv("TMPDIR") == "" {
		if dir := ramTemp(); dir != "" {
			os.Setenv("TMPDIR", dir)
		}
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && runtime.GOMAXPROCS(0) < minParallel {
		_ = flag.Set("test.parallel", strconv.Itoa(minParallel))
	}
}

// noExitPause re-executes the test binary, once, with
// GORACE=atexit_sleep_ms=0 added, when it is built with -race and GORACE
// does not set that option. The detector reads GORACE when the process
// starts, so it cannot be changed later. It returns when there is
// nothing to do, or when the system cannot replace the process (then the
// tests run with the pause, as before).
func noExitPause() {
	if !raceEnabled {
		return
	}
	env, ok := withoutPause(os.Environ())
	if !ok {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	reexec(exe, os.Args, env) // returns only when it failed
}

// withoutPause returns env with atexit_sleep_ms=0 added to GORACE, and
// false when GORACE already sets atexit_sleep_ms.
func withoutPause(env []string) ([]string, bool) {
	out := make([]string, 0, len(env)+1)
	race := "atexit_sleep_ms=0"
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "GORACE=")
		if !ok {
			out = append(out, kv)
			continue
		}
		for _, opt := range strings.Fields(v) {
			if strings.HasPrefix(opt, "atexit_sleep_ms=") {
				return env, false
			}
		}
		if v != "" {
			race = v + " " + race
		}
	}
	return append(out, "GORACE="+race), true
}
