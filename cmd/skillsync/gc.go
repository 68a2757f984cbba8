package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// startHeap is how large the heap may grow before the first collection.
// Most commands (a sync with nothing new, list, prompt, use) end with a
// live heap of a few MiB: collecting at the default 4 MiB goal ran three
// or four cycles in each, a tenth of their CPU.
const startHeap = 64 << 20

// deferGC leaves the collector off until the Go heap first reaches
// startHeap, then hands over to the standard collector (GOGC=100, no
// limit) for the rest of the process: a long sync or the daemon runs as
// before, a short command never collects. A GOGC or GOMEMLIMIT in the
// environment is the user's choice and is left alone.
func deferGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
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
