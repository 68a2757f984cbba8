//go:build amd64 || arm64

package startheap

import (
	"syscall"
	"unsafe"
)

// It imports syscall alone, not golang.org/x/sys/unix, nor even strings
// (which moved it from 15th to 81st): Go runs a package's initialiser
// once its imports are initialised, in import path order among the ready
// ones, so the fewer its imports the earlier it runs (15th of 207 in
// skillsync, after 0.1 MB of heap). So it reads the huge page setting
// itself, as platform.HugePageRoom does, rather than through platform.

const (
	madvHugepage   = 14 // MADV_HUGEPAGE
	madvNohugepage = 15 // MADV_NOHUGEPAGE
	madvCollapse   = 25 // MADV_COLLAPSE, Linux 6.1
	// arenaSize is the Go runtime's heap arena on 64-bit Linux: the heap
	// grows inside 64 MiB ranges aligned to their size.
	arenaSize = 64 << 20
	hugePage  = 2 << 20
)

// first is the address of a heap object made as the package was
// initialised, near the start of the heap: Collapse works up from it.
var first = heapAddress()

func init() {
	if wanted() {
		adviseHeap(first)
	}
}

// Collapse backs with huge pages (MADV_COLLAPSE) the heap filled since
// the initialiser ran: every 2 MiB region from the one that holds the
// initialiser's first object up to the one that holds end, inclusive.
// cmd/skillsync calls it once it has allocated (at end) the range it
// advised for a big command. Why: the runtime maps its heap 4 MiB at a
// time and, with Go 1.26, starts it at a random page of the first 4 MiB,
// so in about half of all runs the initialisers spill into a chunk
// mapped after adviseHeap ran, which has neither advice nor huge pages,
// and the region that holds end is shared with what came before it. A
// sync with nothing to do took 880 page faults in one half and 1,300 in
// the other. A region already huge, or never touched, is left as it is
// (the kernel refuses to collapse what holds no page at all).
func Collapse(end uintptr) {
	if wanted() {
		collapseRange(first, end)
	}
}

// collapseRange collapses the 2 MiB regions from the one that holds
// from up to the one that holds end, at most 16 of them (32 MiB): a heap
// that grew more before the command ran is not one this package knows.
func collapseRange(from, end uintptr) {
	const most = 16
	r := from &^ (hugePage - 1)
	for i := 0; i < most && r <= end; i++ {
		syscall.Syscall(syscall.SYS_MADVISE, r, hugePage, madvCollapse)
		r += hugePage
	}
}

// Undo withdraws the advice from the heap's arena, for a process that
// stays up (the daemon, serve, mcp): what it gives back to the system
// would otherwise be collapsed into huge pages again by khugepaged. The
// pages already huge stay until the runtime gives them back.
func Undo() {
	if wanted() {
		addr := heapAddress()
		syscall.Syscall(syscall.SYS_MADVISE, addr&^(arenaSize-1), arenaSize, madvNohugepage)
	}
}

// wanted reports whether the heap should be advised: only where Linux
// gives huge pages on advice alone ("madvise"; with "always" it gives
// them anyway, and MADV_COLLAPSE would override "never"), and not where
// the environment sets the memory (GOGC, GOMEMLIMIT: the user's choice,
// which cmd/skillsync leaves alone too) or asks the runtime for no huge
// pages (GODEBUG=disablethp=1).
func wanted() bool {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if _, set := syscall.Getenv(name); set {
			return false
		}
	}
	if debug, _ := syscall.Getenv("GODEBUG"); contains(","+debug+",", ",disablethp=1,") {
		return false
	}
	return thpOnAdvice()
}

// thpOnAdvice reads the system's transparent huge page setting.
func thpOnAdvice() bool {
	fd, err := syscall.Open("/sys/kernel/mm/transparent_hugepage/enabled", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var buf [128]byte
	n, err := syscall.Read(fd, buf[:])
	return err == nil && n > 0 && contains(string(buf[:n]), "[madvise]")
}

// contains is strings.Contains, which this package does not import.
func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// heapAddress is the address of a fresh heap object.
func heapAddress() uintptr { return uintptr(unsafe.Pointer(fresh())) }

// fresh allocates on the heap: a pointer a function that is not inlined
// returns escapes to its caller.
//
//go:noinline
func fresh() *[64]byte { return new([64]byte) }

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
// Errors change nothing: where the kernel has no MADV_COLLAPSE or no
// free 2 MiB page, the heap is as it would be.
func adviseHeap(addr uintptr) {
	syscall.Syscall(syscall.SYS_MADVISE, addr&^(arenaSize-1), arenaSize, madvHugepage)
	region := addr &^ (hugePage - 1)
	for _, r := range [...]uintptr{region - hugePage, region, region + hugePage} {
		syscall.Syscall(syscall.SYS_MADVISE, r, hugePage, madvCollapse)
	}
}
