package main

import (
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
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
	deferGC()
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
	deferGC()
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

// forcedGC matches the collection hugeHeap forces, in the runtime's
// trace (its "MB" are MiB): the heap before it holds the untouched range.
var forcedGC = regexp.MustCompile(`(?m)^gc 1 .*, (\d+)->\d+->\d+ MB, .*\(forced\)$`)

// A sync, as its own process, grows its heap by the huge range before
// it reads anything.
func TestSyncAdvisesItsHeapFirst(t *testing.T) {
	t.Parallel()
	if platform.HugePageRoom(hugeRange) < hugeRange {
		t.Skip("this system has no room for the whole range in huge pages")
	}
	r := runProcess(t, t.TempDir(), []string{"GODEBUG=gctrace=1"}, "sync", "--quiet")
	if r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	m := forcedGC.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no forced first collection in the trace:\n%s", r.stderr)
	}
	if got, _ := strconv.Atoi(m[1]); got < hugeRange>>20 || got > hugeRange>>20+8 {
		t.Errorf("heap of %d MiB at the forced collection, want %d and a few", got, hugeRange>>20)
	}
}
