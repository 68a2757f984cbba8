//go:build amd64 || arm64

package startheap

import (
	"syscall"
	"unsafe"
)

// It imports syscall alone, not golang.org/x/sys/unix: Go runs a
// package's initialiser once its imports are initialised, in import path
// order among the ready ones, so the fewer its imports the earlier it
// runs (15th of 207 in skillsync, after 0.1 MB of heap).

const (
	madvHugepage = 14 // MADV_HUGEPAGE
	madvCollapse = 25 // MADV_COLLAPSE, Linux 6.1
	// arenaSize is the Go runtime's heap arena on 64-bit Linux: the heap
	// grows inside 64 MiB ranges aligned to their size.
	arenaSize = 64 << 20
	hugePage  = 2 << 20
)

func init() { adviseHeap(heapAddress()) }

// heapAddress is the address of a fresh heap object: it is returned, so
// it escapes, and not kept, so nothing holds it.
//
//go:noinline
func heapAddress() uintptr {
	return uintptr(unsafe.Pointer(new([64]byte)))
}

// adviseHeap advises huge pages for the arena that holds addr, and
// collapses into huge pages the 2 MiB regions around addr, which the
// runtime has already touched in 4 KiB pages: the advice alone gives
// huge pages only where nothing was touched yet, and the next 2 MiB of
// heap, which a command's initialisers and first allocations fill, are
// in those regions. The runtime maps its heap a few MiB at a time
// (4 MiB, addr 2 MiB into it, with Go 1.26), so the regions before and
// after addr's are collapsed too, each on its own: a region not mapped
// yet refuses, and a range that held one would be refused whole. The
// heap the runtime maps later has no advice (a fresh mapping drops it);
// cmd/skillsync advises what a big command grows into (hugeHeap).
// Errors change nothing: where the system gives no huge pages (THP off,
// an old kernel, no free 2 MiB page) the heap is as it would be.
func adviseHeap(addr uintptr) {
	syscall.Syscall(syscall.SYS_MADVISE, addr&^(arenaSize-1), arenaSize, madvHugepage)
	region := addr &^ (hugePage - 1)
	for _, r := range [...]uintptr{region - hugePage, region, region + hugePage} {
		syscall.Syscall(syscall.SYS_MADVISE, r, hugePage, madvCollapse)
	}
}
