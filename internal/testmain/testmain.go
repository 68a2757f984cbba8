// Package testmain starts a package's tests without the race detector's
// pause at exit.
//
// A program built with -race sleeps one second when it exits with status
// 0 (ThreadSanitizer's atexit_sleep_ms, 1000 by default), to give threads
// still running a last chance to report a race. For a test binary that
// second is idle: the testing package has already failed the run if the
// detector reported anything, during a test or outside one, before it
// returns from m.Run. With 45 test binaries, `go test -race ./...` spent
// 45 s of its 2 package slots sleeping. Every package's TestMain calls
// Main (or NoExitPause first, when it has work of its own to do), so the
// plain `go test -race ./...` runs without the pause; GORACE's other
// options, and an atexit_sleep_ms the caller sets, are kept.
package testmain

import (
	"os"
	"strings"
	"testing"
)

// Main runs the tests without the pause at exit: a package's TestMain
// with nothing else to do is `func TestMain(m *testing.M) { testmain.Main(m) }`.
func Main(m *testing.M) {
	NoExitPause()
	os.Exit(m.Run())
}

// NoExitPause re-executes the test binary, once, with
// GORACE=atexit_sleep_ms=0 added, when it is built with -race and GORACE
// does not set that option. The detector reads GORACE when the process
// starts, so it cannot be changed later. It returns when there is
// nothing to do, or when the system cannot replace the process (then the
// tests run with the pause, as before).
func NoExitPause() {
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
