package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/platform/startheap"
)

// startHeap is how large the process's memory may grow before the first
// collection. Most commands (a sync with nothing new, list, prompt, use)
// end with a live heap of a few MiB: collecting at the default 4 MiB goal
// ran three or four cycles in each, a tenth of their CPU. Above it, fresh
// memory costs more than collecting: every new page is a page fault, 20
// to 30 us each on the 2-core VMs we measure on, and a 1% sync of 2,000
// skills that grew to 64 MiB took 12,200 faults; at 24 MiB it took
// 7,600 and 10% less CPU, while the commands above still never collect.
// A command with a big heap gets that heap in huge pages (hugeHeap, or
// startheap's initialiser). Since the initialiser takes the range, the
// collection before main finds 0.2 MB live, not the 4 MB the one main
// forced found, and the first goal came that much lower: a no-op of
// 10,000 skills collected once at 23 MB with 15 MB live. At 32 MiB it
// does not, and takes 10.7 ms less CPU (list 10.2 ms less), the medium
// 1% sync 4 to 9% less; the medium no-op the same, the medium peak RSS
// 104 MiB (same binary, the size chosen by an environment variable).
// Since then the medium 1% sync allocates some 31 MB, and collected once,
// just before it ended: at 48 MiB it does not, and takes 5 to 10% less
// CPU (bench/alternate.sh -n 10 both ways round, docs/performance.md,
// round forty-three); the peak RSS of sync --verify 108 -> 114 MiB.
const startHeap = 48 << 20

// startPercent is the collector's percent while it is deferred: the
// runtime's least heap goal is 4 MiB at the standard 100%, and scales
// with the percent, so the first collection comes when the heap reaches
// startHeap (the live heap is a few MiB when deferGC is called).
const startPercent = startHeap / (4 << 20) * 100

// memory is the collector tuneMemory gave the process: its plan, and
// whether the heap already has its huge range.
type memory struct {
	plan string
	huge bool
	// mu guards deferrals and the percent changes that go with it.
	mu sync.Mutex
	// deferrals counts the deferrals begun or ended early: a deferral's
	// end restores the standard percent only when no later one replaced
	// it.
	deferrals int64
}

// deferGC leaves the collector off until the Go heap first reaches
// startHeap, then hands over to the standard collector (GOGC=100) for the
// rest of the process: a long sync runs as before, a short command never
// collects. A GOGC or GOMEMLIMIT in the environment is the user's choice
// and is left alone (tuneMemory). Not by a memory limit: that counts the
// free range hugeHeap leaves, which the runtime would then give back.
func (m *memory) deferGC() {
	m.mu.Lock()
	debug.SetGCPercent(startPercent)
	m.deferrals++
	n := m.deferrals
	m.mu.Unlock()
	// The first collection frees the sentinel, and its cleanup restores
	// the standard percent. (Not a tiny object: the runtime may batch
	// those and never run their cleanup.)
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(n int64) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.deferrals == n {
			debug.SetGCPercent(100)
		}
	}, n)
}

// replaceDeferral ends the current deferral before a collection is
// forced: its cleanup, which that collection runs, then changes nothing,
// and the caller defers again.
func (m *memory) replaceDeferral() {
	m.mu.Lock()
	m.deferrals++
	m.mu.Unlock()
}

// longRunning is the annotation of a command that stays up (the daemon,
// serve, mcp): with the collector off it would keep up to startHeap of
// garbage, and an agent may run one mcp server per session. It keeps the
// standard collector, and its heap gives up startheap's advice.
const longRunning = "long-running"

// bigHeap is the annotation of a command that fills its first startHeap
// of heap in one go, reading thousands of records, skills or objects
// (fetch, sync, update, verify): it gets its heap in huge pages first,
// from startheap's initialiser (which knows these commands by name:
// startheap.Big) or else hugeHeap. A short command would not win back
// the collection that costs, unless its workspace is big (fitWorkspace).
const bigHeap = "big-heap"

// tuneMemory sets the process's collector for the command that args
// name, before it runs. Only a run that is the whole process calls it:
// tests run commands in-process and keep their own collector. It returns
// nil when the environment sets the collector.
func tuneMemory(root *cobra.Command, args []string) *memory {
	if userGC() {
		return nil
	}
	m := &memory{plan: memoryPlan(root, args)}
	switch m.plan {
	case standardCollector:
		startheap.Undo()
		return m
	case hugeThenDeferred:
		// The range is usually taken already, by startheap's initialiser:
		// here only when that read the command line otherwise, or the
		// environment sets GOMAXPROCS.
		if startheap.Ranged() {
			m.huge = true
			// Known free in nearly every run: the range's cleanup has
			// run. Else the heap goal tells, at a cost.
			if !startheap.Freed() {
				go m.freeHeldRange(startheap.RangeSize())
			}
		} else if room := startheap.Room(hugeRange); room > 0 {
			hugeHeap(room)
			m.huge = true
		}
	}
	m.deferGC()
	return m
}

// freeHeldRange collects the range of size bytes startheap's initialiser
// took, in a run where the collection the allocation started found it
// still held: the initialiser's goroutine preempted inside the
// allocation, which a stall of the machine at that moment could cause.
// The heap would count the range live, and with the collector deferred
// grow to seven times it before the next collection. It tells from the
// heap goal the last collection set, which is at least what that
// collection found live (twice that at the standard percent):
// ReadMemStats stops the world for some microseconds, on another core,
// where runtime/metrics would cost every process its initialiser (about
// half a millisecond) and its first read (0.2 ms). HeapAlloc would not
// do: it counts the range until it is swept. Only a run where
// startheap.Freed cannot say yet asks: the flush of every P's spans
// ReadMemStats does cost a no-op some 90 page faults.
func (m *memory) freeHeldRange(size int) {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	if stats.NextGC < uint64(size) {
		return
	}
	m.replaceDeferral()
	runtime.GC()
	m.deferGC()
}

// fitWorkspace gives a deferred command its heap in huge pages after
// all, when the workspace it is about to read is big: list, prompt or
// use reads every skill's lock entry, cache record and usage, and in a
// workspace of 2,000 skills fills 5 to 8 MiB of fresh heap, 1,300 to
// 1,900 page faults. The forced collection costs about 200 faults and a
// few milliseconds, more than a small workspace's command would win.
// It reads the sizes of the workspace's lock and usage files.
func (m *memory) fitWorkspace(lockFile, usageFile string) {
	if m == nil || m.plan != deferredCollector || m.huge {
		return
	}
	size := catalogHeap(fileSize(lockFile) + fileSize(usageFile))
	if size == 0 {
		return // a small workspace: not even the system's settings are read
	}
	room := startheap.Room(size)
	if room == 0 {
		return
	}
	m.replaceDeferral()
	hugeHeap(room)
	m.huge = true
	m.deferGC()
}

// catalogHeap is the huge range for a command that reads a catalog
// whose lock and usage files hold size bytes, or 0 when they are too
// small for the range to pay: a catalog read allocates about 14 times
// the bytes of those files (7.5 MiB for 554 KiB), and the range is made
// three times that, for what the command does with it.
func catalogHeap(size int64) int {
	const least = 96 << 10 // about 1,000 skills, 2 to 3 MiB of heap
	switch {
	case size < least:
		return 0
	case size >= hugeRange/40:
		return hugeRange
	}
	return int(size * 40)
}

// fileSize is the size of the file at path, 0 when it cannot be told,
// at most 1 TiB (a sparse file may claim more than two can add up to).
func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return 0
	}
	return min(info.Size(), 1<<40)
}

// The collectors tuneMemory gives a command.
const (
	deferredCollector = "deferred"
	standardCollector = "standard"
	hugeThenDeferred  = "huge pages, then deferred"
)

// memoryPlan names the collector of the command that args name: one
// that cannot be found (a typo, --help) is short-lived like most.
func memoryPlan(root *cobra.Command, args []string) string {
	c, _, err := root.Find(args)
	switch {
	case err != nil:
		return deferredCollector
	case c.Annotations[longRunning] != "":
		return standardCollector
	case c.Annotations[bigHeap] != "":
		return hugeThenDeferred
	}
	return deferredCollector
}

// hugeHeap has the next size bytes of heap backed by transparent huge
// pages; the caller asks startheap.Room for the size, which is 0
// where the system gives no huge pages on advice (Linux set to
// "madvise") or has no room. On the VMs we measure on a page fault costs
// 20 to 30 us, and a 1% sync of 2,000 skills took 7,400 of them filling
// 25 MiB of fresh heap 4 KiB at a time; a 2 MiB page costs one. The Go
// runtime gives no such advice itself, and its heap grows by fresh
// mappings the advice would not reach (internal/platform/startheap
// advises only the first few MiB, before main), so the heap is grown
// here by one allocation that nothing touches, the advice given on its
// range, and the allocation collected: the range is free again, and what
// the command allocates next fills it. The heap below the range, which
// the initialisers filled in 4 KiB pages wherever they spilled past what
// startheap advised, is collapsed into huge pages first (startheap.Collapse):
// the runtime fills it again before the range. The collection ends a
// deferral, so the caller defers again (deferGC).
func hugeHeap(size int) {
	// Off, or the allocation would start a collection of its own.
	debug.SetGCPercent(-1)
	b := make([]byte, size)
	platform.AdviseHugePages(b)
	startheap.Collapse(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	runtime.GC()
}

// hugeRange is the heap a big command gets in huge pages (startheap.Range
// says why that size).
const hugeRange = startheap.Range

// userGC reports whether the environment sets the collector.
func userGC() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }
