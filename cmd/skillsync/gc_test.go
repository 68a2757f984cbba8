package main

import (
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// gcSettings reads the collector's percent and memory limit.
func gcSettings() (percent, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// The collector stays off until the first collection, which hands over
// to the defaults. Not parallel: it changes the test process's collector.
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
	if p, l := gcSettings(); p != -1 || l != startHeap {
		t.Fatalf("after deferGC: percent %d, limit %d; want off and %d", p, l, startHeap)
	}
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, l := gcSettings()
		if p == 100 && l == math.MaxInt64 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a collection: percent %d, limit %d; want 100 and no limit", p, l)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
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
