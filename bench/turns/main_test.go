//go:build unix

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/buildtest"
	"github.com/skillsync/skillsync/internal/testmain"
)

// TestMain runs the tests without the race detector's second of sleep
// at exit (internal/testmain says why).
func TestMain(m *testing.M) { testmain.Main(m) }

// script writes an executable shell script that appends its name and
// arguments to log, then runs body.
func script(t *testing.T, dir, name, log, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	text := "#!/bin/sh\necho " + name + " \"$@\" >> " + log + "\n" + body + "\n"
	if err := buildtest.WriteProgram(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInTurnsAlternatesWhoGoesFirst: every round runs both builds once,
// with the arguments given, and the one that goes first changes from
// round to round; a build that does more work costs more CPU.
func TestInTurnsAlternatesWhoGoesFirst(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	old := script(t, dir, "old", log, "true")
	busy := script(t, dir, "new", log, "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done")
	runs, err := inTurns([]string{old, busy}, []string{"sync", "--quiet"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"old sync --quiet", "new sync --quiet",
		"new sync --quiet", "old sync --quiet",
		"old sync --quiet", "new sync --quiet",
		"new sync --quiet", "old sync --quiet",
	}
	if got := strings.Split(strings.TrimSpace(string(data)), "\n"); !slices.Equal(got, want) {
		t.Errorf("runs in order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(runs[0]) != 4 || len(runs[1]) != 4 {
		t.Fatalf("%d and %d runs, want 4 of each", len(runs[0]), len(runs[1]))
	}
	cpu := func(c cost) float64 { return c.cpu }
	if o, n := median(runs[0], cpu), median(runs[1], cpu); n <= o {
		t.Errorf("CPU medians: old %.2f ms, busy new %.2f ms; want new above old", o, n)
	}
}

// TestInTurnsStopsAtAFailure: a run that fails stops the comparison with
// its exit status and what it printed on stderr.
func TestInTurnsStopsAtAFailure(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	ok := script(t, dir, "old", log, "true")
	bad := script(t, dir, "new", log, "echo 'no config here' >&2; exit 3")
	_, err := inTurns([]string{ok, bad}, nil, 3)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no config here") {
		t.Fatalf("err = %v, want the failed run's status and stderr", err)
	}
}

func TestSplitArgsAndMedian(t *testing.T) {
	builds, args := splitArgs([]string{"a", "b", "--", "sync", "--json"})
	if !slices.Equal(builds, []string{"a", "b"}) || !slices.Equal(args, []string{"sync", "--json"}) {
		t.Errorf("splitArgs = %v, %v", builds, args)
	}
	if builds, args := splitArgs([]string{"a", "b"}); len(builds) != 2 || args != nil {
		t.Errorf("splitArgs without -- = %v, %v", builds, args)
	}
	wall := func(c cost) float64 { return c.wall }
	for _, tt := range []struct {
		walls []float64
		want  float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		runs := make([]cost, len(tt.walls))
		for i, w := range tt.walls {
			runs[i].wall = w
		}
		if got := median(runs, wall); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.walls, got, tt.want)
		}
	}
}
