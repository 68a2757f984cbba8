//go:build amd64 || arm64

package startheap

import (
	"runtime"
	"syscall"
	"unsafe"

	"github.com/skillsync/skillsync/internal/platform/rawfile"
)

// It imports syscall, runtime and rawfile alone, not golang.org/x/sys/unix,
// nor even strings (which moved it from 15th to 81st), nor runtime/debug
// (138th): Go runs a package's initialiser once its imports are
// initialised, in import path order among the ready ones, so the fewer
// its imports the earlier it runs (15th of 207 in skillsync, after 0.1
// MB of heap). So it reads the system's settings and the command line
// itself.

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

// ranged is the start of the range the initialiser took for a big
// command (takeRange), 0 when it took none; rangeSize its size.
var (
	ranged    uintptr
	rangeSize int
)

// rangeFreed is closed once the collection has freed the range's
// allocation (by a cleanup the runtime runs after it sweeps the span).
var rangeFreed chan struct{}

func init() {
	if !wanted() {
		return
	}
	adviseHeap(first)
	if args, whole := commandLine(); rangeWanted() && Big(Command(args)) {
		lock := int64(-1)
		if whole {
			lock = syncLock()
		}
		size := roomFor(rangeFor(args, lock), true)
		if ranged = takeRange(size); ranged != 0 {
			rangeSize = size
		}
	}
}

// syncLock returns the size of the current folder's lock file, where a
// sync with no config named (--config, $SKILLSYNC_CONFIG) nor the
// user-wide one (-g) reads it; -1 when there is none.
func syncLock() int64 {
	if _, set := syscall.Getenv("SKILLSYNC_CONFIG"); set {
		return -1
	}
	var st syscall.Stat_t
	if syscall.Stat(lockName, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return -1
	}
	return st.Size
}

// lockName is the workspace's lock file (workspace.LockName, which this
// package does not import: it is initialised early by having few
// imports).
const lockName = "skillsync.lock"

// rangeFor returns the range a big command line (without the program's
// name) gets, from the size of the lock file in the current folder
// (lock; -1 for none). A sync or update of a workspace with a lock grows
// its heap with the workspace, not with Range: a 1% sync of 2,000 skills
// (a 182 KiB lock) peaks near 40 MiB, of 10,000 skills near 110 MiB. The
// range's records cost a page fault for each 4 MiB of it (its span
// table), paid by every sync, the no-op included: a 64 MiB range took
// the medium no-op 50 fewer faults than 256 MiB, and its 1% sync none
// more. Everything else gets Range: a first sync (no lock yet), a
// workspace named elsewhere (--config, -g), a sync that reads every
// file (--verify), fetch and verify. The range is a guess at the heap,
// never more: a config here that puts its workspace elsewhere
// (workspace:) leaves a lock found here to size it, and a heap that
// outgrows its range grows on in 4 KiB pages.
func rangeFor(args []string, lock int64) int {
	if cmd := Command(args); lock < 0 || (cmd != "sync" && cmd != "update") {
		return Range
	}
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if hasPrefix(arg, "--config") || hasPrefix(arg, "--global") || hasPrefix(arg, "--verify") || shortG(arg) {
			return Range
		}
	}
	const base, least, per = 32 << 20, 64 << 20, 160
	if lock >= (Range-base)/per { // and no product to overflow
		return Range
	}
	size := max(least, base+lock*per)
	return int(size+hugePage-1) &^ (hugePage - 1)
}

// shortG reports whether arg is a cluster of short flags (-g, -qg,
// -g=true) that holds -g.
func shortG(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || arg[1] == '-' {
		return false
	}
	flags := arg[1:]
	for i := 0; i < len(flags); i++ {
		if flags[i] == '=' { // -g=true: a value for the last flag
			flags = flags[:i]
			break
		}
	}
	for _, c := range flags {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return contains(flags, "g")
}

// hasPrefix is strings.HasPrefix, which this package does not import.
func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// rangeWanted reports whether the initialiser may take the range: not
// where the environment sets GOMAXPROCS, as restoring the Ps the user
// chose would not wait for the collection (GOMAXPROCS=1) or would stop
// the runtime's own updates (a value it ignores), nor where GODEBUG sets
// gcstoptheworld, under which the collection always holds the
// allocation. cmd/skillsync takes the range in main instead.
func rangeWanted() bool {
	if _, set := syscall.Getenv("GOMAXPROCS"); set {
		return false
	}
	debug, _ := syscall.Getenv("GODEBUG")
	return !contains(","+debug, ",gcstoptheworld=")
}

// Ranged reports whether the initialiser took the range for a big
// command: the heap then grows into RangeSize bytes advised for huge
// pages.
func Ranged() bool { return ranged != 0 }

// RangeSize is the size of the range the initialiser took, 0 for none.
func RangeSize() int { return rangeSize }

// Freed reports whether the range the initialiser took is known to be
// free: its allocation's cleanup ran. False for no range, and while the
// runtime has not yet swept the range's span or run the cleanup.
func Freed() bool {
	if rangeFreed == nil {
		return false
	}
	select {
	case <-rangeFreed:
		return true
	default:
		return false
	}
}

// takeRange grows the heap by size bytes that nothing touches, advises
// huge pages on them and leaves them to the collector, so that the
// initialisers after this one and the command fill them 2 MiB at a
// time; it returns where the range starts, or 0 for no range. It is
// done here, before the other initialisers fill the heap, because the
// collection that frees the range then has little to scan and few spans
// to hand back: done in main, the same range cost a medium sync with
// nothing to do 4 ms more CPU (same binary, 150 runs each in turns).
//
// The allocation starts the collection itself (nothing here can turn
// the collector off: runtime/debug would run this initialiser 138th).
// With two Ps the collection's workers may scan this goroutine while the
// runtime still holds the allocation, which then stays, its range used
// by nothing (46 of 200 runs). With one P they run only once this
// goroutine blocks, in giving the runtime its Ps back, which waits for
// the collection to end (200 of 200 runs freed the range). Were this
// goroutine preempted inside the allocation all the same, the range
// would stay held: cmd/skillsync checks, and collects it in main.
func takeRange(size int) uintptr {
	if size < hugePage {
		return 0
	}
	runtime.GOMAXPROCS(1)
	rangeFreed = make(chan struct{})
	start := allocate(size, rangeFreed)
	syscall.Syscall(syscall.SYS_MADVISE, start, uintptr(size), madvHugepage)
	// The runtime's default, which it then keeps up to date again (a
	// call to GOMAXPROCS alone would stop that); the environment sets
	// none (rangeWanted). Even on one CPU this stops the world, as the
	// call above marked the Ps as chosen, and so waits.
	runtime.SetDefaultGOMAXPROCS()
	return start
}

// allocate returns the address of a new heap object of size bytes,
// which nothing keeps; freed is closed once it is collected.
//
//go:noinline
func allocate(size int, freed chan struct{}) uintptr {
	b := unsafe.SliceData(make([]byte, size))
	runtime.AddCleanup(b, func(c chan struct{}) { close(c) }, freed)
	return uintptr(unsafe.Pointer(b))
}

// Room returns how much of want a program should map ahead, untouched,
// to advise huge pages on: none where the heap gets no advice (the
// environment's choices and the system's setting, as for the first
// heap), where the system counts every mapping against a commit limit
// (overcommit_memory 2), or where the process's address space or data
// is capped (RLIMIT_AS, RLIMIT_DATA): an untouched range still counts
// there, and a Go program that cannot map memory dies. Else want, up to
// an eighth of the machine's memory.
func Room(want int) int { return roomFor(want, wanted()) }

// roomFor is Room where whether the heap gets advice is known
// (onAdvice): the initialiser has just asked, and reading the system's
// setting again costs a file's open and read.
func roomFor(want int, onAdvice bool) int {
	var space, data syscall.Rlimit
	var info syscall.Sysinfo_t
	if syscall.Getrlimit(syscall.RLIMIT_AS, &space) != nil || syscall.Getrlimit(syscall.RLIMIT_DATA, &data) != nil || syscall.Sysinfo(&info) != nil {
		return 0
	}
	capped := space.Cur != ^uint64(0) || data.Cur != ^uint64(0)
	return room(want, onAdvice, readSetting("/proc/sys/vm/overcommit_memory"), capped, uint64(info.Totalram)*uint64(info.Unit))
}

// Collapse backs with huge pages (MADV_COLLAPSE) the heap filled since
// the initialiser ran: every 2 MiB region from the one that holds the
// initialiser's first object up to the one that holds end, inclusive.
// cmd/skillsync calls it once it has allocated (at end) a range it
// advised in main: for a big command whose range the initialiser did not
// take, or for a big workspace's catalog. Why: the runtime maps its heap 4 MiB at a
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

// Undo withdraws the advice from the heap's arenas, for a process that
// stays up (the daemon, serve, mcp): what it gives back to the system
// would otherwise be collapsed into huge pages again by khugepaged. The
// pages already huge stay until the runtime gives them back. It covers
// every arena from the one the initialiser advised to the one a new
// object lands in now: on a busy machine the heap had moved on to the
// next arena by then in some runs, and the advised one kept its advice.
func Undo() {
	if wanted() {
		withdraw(first&^(arenaSize-1), heapAddress()&^(arenaSize-1))
	}
}

// withdraw withdraws the advice from the arenas from the one at a to the
// one at b, inclusive, in either order, at most 16 of them (1 GiB).
func withdraw(a, b uintptr) {
	if b < a {
		a, b = b, a
	}
	for i := 0; i < 16 && a <= b; i++ {
		syscall.Syscall(syscall.SYS_MADVISE, a, arenaSize, madvNohugepage)
		a += arenaSize
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
	return contains(readSetting("/sys/kernel/mm/transparent_hugepage/enabled"), "[madvise]")
}

// commandLine returns the process's arguments after the program's name,
// as Linux keeps them: os.Args is not set before package os is
// initialised. A longer command line than a page is cut (whole is
// false): the command comes first, but a flag after the cut is not seen.
func commandLine() (args []string, whole bool) {
	buf := make([]byte, 4096)
	line := rawfile.Read("/proc/self/cmdline", buf)
	start := 0
	for i := 0; i < len(line); i++ {
		if line[i] == 0 {
			args = append(args, line[start:i])
			start = i + 1
		}
	}
	if start < len(line) {
		args = append(args, line[start:])
	}
	if len(args) == 0 {
		return nil, false
	}
	return args[1:], len(line) < len(buf)
}

// readSetting returns the start of a small file of the system's, "" when
// it cannot be read.
func readSetting(path string) string {
	var buf [128]byte
	return rawfile.Read(path, buf[:])
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
