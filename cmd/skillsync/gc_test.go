package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/skillsync/skillsync/internal/platform/startheap"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// gcSettings reads the collector's percent and memory limit.
func gcSettings() (percent, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// The collector waits for the start heap, then hands over to the
// standard percent; the memory limit is not touched. Not parallel: it
// changes the test process's collector.
func TestDeferGC(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: deferGC leaves them alone")
	}
	before, beforeLimit := gcSettings()
	t.Cleanup(func() {
		runtime.GC()
		if p, l := gcSettings(); p != before || l != beforeLimit {
			t.Logf("collector left at %d%%, limit %d", p, l)
		}
	})
	(&memory{}).deferGC()
	if p, l := gcSettings(); p != startPercent || l != beforeLimit {
		t.Fatalf("after deferGC: percent %d, limit %d; want %d and %d", p, l, startPercent, beforeLimit)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, l := gcSettings()
		if p == 100 && l == beforeLimit {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a collection: percent %d, limit %d; want 100 and %d", p, l, beforeLimit)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// Deferred, the collector first runs when the heap nears startHeap: not
// at the runtime's 4 MiB, not past startHeap. Not parallel: it changes
// the test process's collector.
func TestDeferredCollectionComesAtStartHeap(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: deferGC leaves them alone")
	}
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	cycles := stats.NumGC
	(&memory{}).deferGC()
	var keep [][]byte
	for {
		keep = append(keep, make([]byte, 64<<10))
		runtime.ReadMemStats(&stats)
		if stats.NumGC != cycles {
			break
		}
		if stats.HeapAlloc > 2*startHeap {
			t.Fatalf("no collection with %d MiB of heap", stats.HeapAlloc>>20)
		}
	}
	if got := len(keep) * 64 << 10; got < startHeap/2 {
		t.Errorf("the first collection came after %d MiB, want about %d", got>>20, startHeap>>20)
	}
}

// The commands that stay up keep the standard collector, a sync gets
// its heap in huge pages first, and every other command defers the
// collector; the command is found past the global flags.
func TestMemoryPlan(t *testing.T) {
	t.Parallel()
	root := (&app{}).newRootCommand()
	byPlan := map[string][]string{}
	for _, c := range root.Commands() {
		plan := memoryPlan(root, []string{c.Name()})
		byPlan[plan] = append(byPlan[plan], c.Name())
	}
	if got := strings.Join(byPlan[standardCollector], " "); got != "daemon mcp serve" {
		t.Errorf("standard collector for %q, want daemon, mcp and serve", got)
	}
	if got := strings.Join(byPlan[hugeThenDeferred], " "); got != "fetch sync update verify" {
		t.Errorf("huge pages for %q, want fetch, sync, update and verify", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "sync", "sync", "--verify"}, hugeThenDeferred},
		{[]string{"-q", "--log-format", "json", "daemon"}, standardCollector},
		{[]string{"use", "sync"}, deferredCollector},
		{[]string{"--help"}, deferredCollector},
		{[]string{"snyc"}, deferredCollector},
		{nil, deferredCollector},
	} {
		if got := memoryPlan(root, tc.args); got != tc.want {
			t.Errorf("memoryPlan(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

// liveHeap reads what the last collection found live, and the
// collections so far.
func liveHeap() (live, cycles uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// A range the initialiser's collection left held is collected in main,
// and the collector deferred again; with the range freed, nothing is
// collected. Not parallel: it changes the test process's collector.
func TestFreeHeldRange(t *testing.T) {
	if userGC() {
		t.Skip("GOGC or GOMEMLIMIT is set: the collector is the user's")
	}
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	m := &memory{}

	held := make([]byte, hugeRange)
	runtime.GC()
	runtime.KeepAlive(held)
	held = nil
	if live, _ := liveHeap(); live < hugeRange {
		t.Fatalf("the collection found %d bytes live, not the range held", live)
	}
	m.freeHeldRange(hugeRange)
	if live, _ := liveHeap(); live >= hugeRange/2 {
		t.Errorf("%d bytes live after freeHeldRange: the range is still held", live)
	}
	if p, _ := gcSettings(); p != startPercent {
		t.Errorf("the collector at %d%% after, want it deferred again (%d%%)", p, startPercent)
	}

	_, cycles := liveHeap()
	m.freeHeldRange(hugeRange)
	if _, after := liveHeap(); after != cycles {
		t.Errorf("%d collections with nothing held", after-cycles)
	}
}

// startheap's initialiser tells the big commands from the command line
// before cobra can: its list and its reading of the global flags must be
// the command tree's. Every command, alias included, is big to it when
// annotated so; a command line with any global flag before the command,
// with its value where it takes one, names the same command to it as to
// cobra.
func TestStartheapKnowsTheCommandTree(t *testing.T) {
	t.Parallel()
	root := (&app{}).newRootCommand()
	for _, c := range root.Commands() {
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			if big := c.Annotations[bigHeap] != ""; startheap.Big(name) != big {
				t.Errorf("startheap.Big(%q) = %v, but the command is annotated big-heap: %v", name, !big, big)
			}
		}
	}
	var lines [][]string
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		names := []string{"--" + f.Name}
		if f.Shorthand != "" {
			names = append(names, "-"+f.Shorthand)
		}
		for _, name := range names {
			if f.NoOptDefVal != "" { // given alone, as a switch
				lines = append(lines, []string{name, "list"})
				continue
			}
			lines = append(lines, []string{name, "sync", "list"})
			if strings.HasPrefix(name, "--") {
				lines = append(lines, []string{name + "=sync", "list"})
			}
		}
	})
	if len(lines) < 7 {
		t.Fatalf("only %d command lines from the global flags", len(lines))
	}
	for _, args := range lines {
		c, _, err := root.Find(args)
		if err != nil || c.Name() != "list" {
			t.Fatalf("cobra finds %v, %v in %q: the test's own reading is wrong", c, err, args)
		}
		if got := startheap.Command(args); got != "list" {
			t.Errorf("startheap.Command(%q) = %q, cobra finds list", args, got)
		}
	}
}

// forcedGC matches the collection hugeHeap forces, in the runtime's
// trace (its "MB" are MiB): the heap before it holds the untouched range.
var forcedGC = regexp.MustCompile(`(?m)^gc 1 .*, (\d+)->\d+->\d+ MB, .*\(forced\)$`)

// rangeGC matches the first collection in the runtime's trace (its "MB"
// are MiB): the heap before it and what it left live.
var rangeGC = regexp.MustCompile(`(?m)^gc 1 .*, (\d+)->\d+->(\d+) MB, `)

// A sync, as its own process, grows its heap by the huge range before
// it reads anything: startheap's initialiser takes it, and its first
// collection, before main, frees it. With the global flags before it the
// command is told the same.
func TestSyncAdvisesItsHeapFirst(t *testing.T) {
	t.Parallel()
	if startheap.Room(hugeRange) < hugeRange {
		t.Skip("this system has no room for the whole range in huge pages")
	}
	for _, args := range [][]string{
		{"sync", "--quiet"},
		{"--config", "skillsync.yaml", "--log-format", "json", "-q", "sync"},
	} {
		ws := t.TempDir()
		if args[0] == "--config" {
			skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\n")
		}
		r := runProcess(t, ws, []string{"GODEBUG=gctrace=1,inittrace=1"}, args...)
		if r.code != 0 {
			t.Fatalf("%q: %d %s", args, r.code, r.stderr)
		}
		m := rangeGC.FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("%q: no collection in the trace:\n%s", args, r.stderr)
		}
		before, _ := strconv.Atoi(m[1])
		live, _ := strconv.Atoi(m[2])
		if before < hugeRange>>20 || before > hugeRange>>20+8 || live > 8 {
			t.Errorf("%q: the first collection went from %d MiB to %d live, want the range of %d MiB and a few, then a few", args, before, live, hugeRange>>20)
		}
		// Before the initialisers of the packages that fill the heap.
		if gc, goldmark := strings.Index(r.stderr, m[0]), strings.Index(r.stderr, "init github.com/yuin/goldmark"); goldmark < 0 || gc > goldmark {
			t.Errorf("%q: the collection came at %d of the trace, goldmark's initialiser at %d", args, gc, goldmark)
		}
	}
}

// checkForcedGC checks the runtime's trace for the forced first
// collection of a range of want bytes: the heap before it holds the
// range and a few MiB more.
func checkForcedGC(t *testing.T, trace string, want int) {
	t.Helper()
	m := forcedGC.FindStringSubmatch(trace)
	if m == nil {
		t.Fatalf("no forced first collection in the trace:\n%s", trace)
	}
	if got, _ := strconv.Atoi(m[1]); got < want>>20 || got > want>>20+8 {
		t.Errorf("heap of %d MiB at the forced collection, want %d and a few", got, want>>20)
	}
}

// A command that reads a big workspace's catalog gets its heap in huge
// pages, sized from the workspace's files, and stays deferred after:
// the collection that frees the first deferral's sentinel must not end
// the second deferral. A small workspace's command forces nothing.
func TestBigCatalogAdvisesItsHeap(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if r := run(t, ws, "sync", "--quiet"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	trace := []string{"GODEBUG=gctrace=1"}
	r := runProcess(t, ws, trace, "list", "--quiet")
	if r.code != 0 || strings.Contains(r.stderr, "(forced)") {
		t.Fatalf("list in a small workspace: %d, forced a collection:\n%s", r.code, r.stderr)
	}

	// Usage kept for 12,000 skills no source has any more: the catalog
	// reads it all.
	var usage strings.Builder
	usage.WriteString(`{"version": 2, "skills": {`)
	for i := range 12000 {
		if i > 0 {
			usage.WriteString(",")
		}
		fmt.Fprintf(&usage, `"marketplace:gone/skill-%05d": {"use_count": 1, "view_count": 0, "first_seen_at": "2026-11-01T10:00:00Z", "state": "active", "pinned": false}`, i)
	}
	usage.WriteString("}}")
	path := filepath.Join(ws, "skills", ".usage.json")
	skilltest.WriteFile(t, path, usage.String())
	want := catalogHeap(fileSize(path) + fileSize(filepath.Join(ws, "skillsync.lock")))
	if want == 0 || startheap.Room(want) < want {
		t.Skipf("no room for a range of %d bytes in huge pages here", want)
	}
	r = runProcess(t, ws, trace, "list", "--quiet")
	if r.code != 0 {
		t.Fatalf("list: %d %s", r.code, r.stderr)
	}
	checkForcedGC(t, r.stderr, want)
	if strings.Contains(r.stderr, "\ngc 2 ") {
		t.Errorf("collected again after the forced collection: the deferral ended\n%s", r.stderr)
	}
}

// The range for a catalog read grows with the workspace's files, from
// the size where it pays, up to the sync's range.
func TestCatalogHeap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		size int64
		want int
	}{
		{0, 0},
		{96<<10 - 1, 0},
		{96 << 10, 40 * 96 << 10},
		{554 << 10, 40 * 554 << 10},
		{64 << 20, hugeRange},
		{1 << 62, hugeRange},
	} {
		if got := catalogHeap(tc.size); got != tc.want {
			t.Errorf("catalogHeap(%d) = %d, want %d", tc.size, got, tc.want)
		}
	}
}
