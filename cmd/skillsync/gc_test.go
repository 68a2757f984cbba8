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

// The commands that stay up take the standard collector at once; no
// other command is marked so.
func TestLongRunningCommandsCollect(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: standardGC leaves them alone")
	}
	var marked []string
	for _, c := range (&app{}).newRootCommand().Commands() {
		if c.Annotations[longRunning] != "" {
			marked = append(marked, c.Name())
		}
	}
	if strings.Join(marked, " ") != "daemon mcp serve" {
		t.Errorf("long-running commands %v, want daemon, mcp and serve", marked)
	}
	deferGC()
	standardGC()
	if p, l := gcSettings(); p != 100 || l != math.MaxInt64 {
		t.Errorf("after standardGC: percent %d, limit %d; want 100 and no limit", p, l)
	}
}
