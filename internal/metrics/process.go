package metrics

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// Process adds the gauges of the running process that a dashboard of a
// Go service expects: goroutines, heap in use, start time and, where the
// system tells it (process_linux.go), resident memory.
func Process(started time.Time) Gather {
	return func(g *Gauges) {
		g.Add("go_goroutines", "Goroutines that currently exist.", nil, nil, float64(runtime.NumGoroutine()))
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 {
			g.Add("go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.", nil, nil, float64(s[0].Value.Uint64()))
		}
		g.Add("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", nil, nil, float64(started.UnixNano())/1e9)
		if rss, ok := residentBytes(); ok {
			g.Add("process_resident_memory_bytes", "Resident memory size in bytes.", nil, nil, float64(rss))
		}
	}
}
