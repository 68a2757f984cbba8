package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// startHeap is how large the process's memory may grow before the first
// collection. Most commands (a sync with nothing new, list, prompt, use)
// end with a live heap of a few MiB: collecting at the default 4 MiB goal
// ran three or four cycles in each, a tenth of their CPU. Above it, fresh
// memory costs more than collecting: every new page is a page fault, 20
// to 30 us each on the 2-core VMs we measure on, and a 1% sync of 2,000
// skills that grew to 64 MiB took 12,200 faults; at 24 MiB it takes
// 7,600 and 10% less CPU, while the commands above still never collect.
const startHeap = 24 << 20

// deferGC leaves the collector off until the Go heap first reaches
// startHeap, then hands over to the standard collector (GOGC=100, no
// limit) for the rest of the process: a long sync runs as before, a
// short command never collects. The commands that stay up (longRunning)
// take the standard collector at once. A GOGC or GOMEMLIMIT in the
// environment is the user's choice and is left alone.
func deferGC() {
	if userGC() {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(startHeap)
	// The first collection is the one the limit forces; it frees the
	// sentinel, and its cleanup restores the defaults. (Not a tiny
	// object: the runtime may batch those and never run their cleanup.)
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}, struct{}{})
}

// longRunning is the annotation of a command that stays up (the daemon,
// serve, mcp): with the collector off it would keep up to startHeap of
// garbage, and an agent may run one mcp server per session.
const longRunning = "long-running"

// standardGC gives the process the standard collector now.
func standardGC() {
	if userGC() {
		return
	}
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
}

// userGC reports whether the environment sets the collector.
func userGC() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }
