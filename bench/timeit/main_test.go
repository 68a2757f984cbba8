//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/testmain"
)

// TestMain runs the tests without the race detector's second of sleep
// at exit (internal/testmain says why).
func TestMain(m *testing.M) { testmain.Main(m) }

// TestRun checks what run reports of commands whose cost is known: the
// exit status passed on, CPU time that counts a busy child's work, and a
// command that cannot start.
func TestRun(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		code   int
		minCPU float64 // ms
	}{
		{"exit status", []string{"sh", "-c", "exit 3"}, 3, 0},
		// As a shell says it: 128 + the signal.
		{"killed", []string{"sh", "-c", "kill -TERM $$"}, 128 + 15, 0},
		// The shell's loop runs in the shell itself: its CPU is the
		// command's own.
		{"busy", []string{"sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"}, 0, 20},
		// The work of a child the command waited for counts too.
		{"child", []string{"sh", "-c", "sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; true"}, 0, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "time")
			code, err := run(out, c.args)
			if err != nil || code != c.code {
				t.Fatalf("run = %d, %v; want %d, nil", code, err, c.code)
			}
			wall, cpu, rss := readFigures(t, out)
			if wall <= 0 || rss <= 0 || cpu < c.minCPU {
				t.Errorf("wall %v ms, CPU %v ms, RSS %v KiB; want all above 0 and CPU at least %v", wall, cpu, rss, c.minCPU)
			}
		})
	}
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		code       int
	}{
		{"no such command", filepath.Join(t.TempDir(), "missing"), 127},
		{"not executable", notExec, 126},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "time")
			if code, err := run(out, []string{c.path}); code != c.code || err == nil {
				t.Fatalf("run = %d, %v; want %d and an error", code, err, c.code)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("figures written for a command that never ran")
			}
		})
	}
}

func readFigures(t *testing.T, path string) (wall, cpu, rss float64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) != 3 {
		t.Fatalf("%s holds %q, want three figures", path, data)
	}
	var v [3]float64
	for i, s := range f {
		if v[i], err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return v[0], v[1], v[2]
}
