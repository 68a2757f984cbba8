package metrics

import (
	"runtime"
	"time"
)

// Process adds the gauges of the running process that a dashboard of a
// Go service expects: goroutines, heap in use, start time and, where the
// system tells it (process_linux.go), resident memory.
func Process(started time.Time) Gather {
	return func(g *Gauges) {
		g.Add("go_goroutines", "Goroutines that currently exist.", nil, nil, float64(runtime.NumGoroutine()))
		// ReadMemStats, not runtime/metrics: that package's init alone
		// costs every skillsync process a millisecond at start.
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		g.Add("go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.", nil, nil, float64(ms.HeapAlloc))
		g.Add("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", nil, nil, float64(started.UnixNano())/1e9)
		if rss, ok := residentBytes(); ok {
			g.Add("process_resident_memory_bytes", "Resident memory size in bytes.", nil, nil, float64(rss))
		}
	}
}
