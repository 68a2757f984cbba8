//go:build amd64 || arm64

package startheap

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestHeapIsAdvisedAtInit reads this test process's own mappings: the
// package's initialiser ran in it, so the heap range that holds a fresh
// object must carry the huge-page advice (VmFlags "hg", which nothing but
// MADV_HUGEPAGE sets).
func TestHeapIsAdvisedAtInit(t *testing.T) {
	if !wanted() {
		t.Skip("huge pages are not given on advice here, or the environment sets the memory")
	}
	addr := heapAddress()
	m, ok := mappingOf(t, addr)
	if !ok {
		t.Fatalf("no mapping holds the heap address %#x", addr)
	}
	if !strings.Contains(" "+m.flags+" ", " hg ") {
		t.Errorf("the heap mapping %s has flags %q, without hg: the initialiser gave no advice", m.span, m.flags)
	}
}

type mapping struct {
	span, flags string
	huge        int // kB in transparent huge pages
}

// mappingOf finds the mapping of /proc/self/smaps that holds addr.
func mappingOf(t *testing.T, addr uintptr) (mapping, bool) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var cur mapping
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if span, _, found := strings.Cut(line, " "); found && strings.Contains(span, "-") && !strings.HasSuffix(span, ":") {
			lo, hi, _ := strings.Cut(span, "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			cur = mapping{span: span}
			continue
		}
		if kb, ok := strings.CutPrefix(line, "AnonHugePages:"); ok && in {
			cur.huge, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")))
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			cur.flags = strings.TrimSpace(flags)
			return cur, true
		}
	}
	return mapping{}, false
}

// TestAdviseHeapCollapsesAroundAddr: the three 2 MiB regions around the
// address, touched in 4 KiB pages as the runtime leaves its first heap,
// end up in huge pages (AnonHugePages of the mapping). The regions sit
// well inside one 64 MiB arena of the test's own mapping, which the
// advice splits at the arena's bounds.
func TestAdviseHeapCollapsesAroundAddr(t *testing.T) {
	const size = arenaSize + 16<<20
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	start := uintptr(unsafe.Pointer(&mem[0]))
	arena := (start + arenaSize - 1) &^ (arenaSize - 1)
	first := arena + 8<<20
	for a := first; a < first+3*hugePage; a += 4096 {
		mem[a-start] = 1
	}

	mid := first + hugePage
	adviseHeap(mid + 100)
	m, ok := mappingOf(t, mid)
	if !ok {
		t.Fatal("the test's mapping is not in /proc/self/smaps")
	}
	if m.huge >= 3*hugePage>>10 {
		return
	}
	// Whether the system could have: a region it collapses now, adviseHeap
	// left alone.
	for r := first; r < first+3*hugePage; r += hugePage {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r, hugePage, madvCollapse); errno != 0 {
			t.Skipf("this system does not collapse huge pages now: %v", errno)
		}
	}
	t.Errorf("%s: %d kB in huge pages, want the 3 regions around the address, %d kB", m.span, m.huge, 3*hugePage>>10)
}

// TestCollapseRangeTakesTheRegionsUpToEnd: regions touched in 4 KiB
// pages, as a heap the runtime mapped after the initialiser leaves them,
// end up in huge pages from the one that holds from up to the one that
// holds end; the region after end does not, nor does any past the
// bound.
func TestCollapseRangeTakesTheRegionsUpToEnd(t *testing.T) {
	const regions = 20
	mem, err := syscall.Mmap(-1, 0, (regions+1)*hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	start := uintptr(unsafe.Pointer(&mem[0]))
	base := (start + hugePage - 1) &^ (hugePage - 1)
	// A page in each region, as a heap's first objects leave them.
	for r := range regions {
		mem[base+uintptr(r)*hugePage+4096-start] = 1
	}
	if m, ok := mappingOf(t, base); !ok {
		t.Fatal("the test's mapping is not in /proc/self/smaps")
	} else if m.huge > 0 {
		t.Skip("this system gave huge pages without advice")
	}

	// From inside region 1 to inside region 3: regions 1, 2 and 3.
	collapseRange(base+hugePage+8192, base+3*hugePage+100)
	m, _ := mappingOf(t, base)
	if got, want := m.huge, 3*hugePage>>10; got != want {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base+4*hugePage, hugePage, madvCollapse); errno != 0 {
			t.Skipf("this system does not collapse huge pages now: %v", errno)
		}
		t.Fatalf("%s: %d kB in huge pages after collapsing regions 1 to 3, want %d kB", m.span, got, want)
	}

	// The bound: from region 0 to the last, at most 16 regions.
	collapseRange(base, base+uintptr(regions-1)*hugePage)
	m, _ = mappingOf(t, base)
	if got, want := m.huge, 16*hugePage>>10; got != want {
		t.Errorf("%s: %d kB in huge pages after collapsing from region 0 to %d, want the first 16 regions, %d kB", m.span, got, regions-1, want)
	}

	// An end below the start takes nothing.
	before := m.huge
	collapseRange(base+18*hugePage, base+17*hugePage)
	if m, _ = mappingOf(t, base); m.huge != before {
		t.Errorf("an end below the start collapsed %d kB", m.huge-before)
	}
}

// TestWantedLeavesTheEnvironmentsChoice: GOGC, GOMEMLIMIT and
// GODEBUG=disablethp=1 each keep the heap as the runtime makes it.
func TestWantedLeavesTheEnvironmentsChoice(t *testing.T) {
	for _, env := range [][2]string{
		{"GOGC", "100"},
		{"GOMEMLIMIT", "1GiB"},
		{"GODEBUG", "disablethp=1"},
		{"GODEBUG", "gctrace=1,disablethp=1"},
	} {
		t.Run(env[0]+"="+env[1], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			if wanted() {
				t.Error("wanted the advice")
			}
		})
	}
	t.Run("GODEBUG=disablethp=10", func(t *testing.T) {
		t.Setenv("GODEBUG", "disablethp=10")
		if wanted() != thpOnAdvice() {
			t.Error("another setting's name was taken for disablethp=1")
		}
	})
}

// This machine's own answer agrees with what it says.
func TestRoomOnThisMachine(t *testing.T) {
	t.Parallel()
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	mode, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	if err != nil {
		t.Fatal(err)
	}
	var space, data syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &space); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &data); err != nil {
		t.Fatal(err)
	}
	got := Room(Range)
	if !wanted() || !strings.Contains(string(enabled), "[madvise]") || strings.TrimSpace(string(mode)) == "2" || space.Cur != math.MaxUint64 || data.Cur != math.MaxUint64 {
		if got != 0 {
			t.Errorf("Room = %d on a system set to %q, overcommit %q", got, enabled, mode)
		}
		return
	}
	if got <= 0 || got > Range {
		t.Errorf("Room = %d, want up to %d", got, Range)
	}
}

// rangeChildEnv tells the test binary it runs TestRangeChild for
// TestRangeAtInit, and whether the initialiser must have taken the range.
const (
	rangeChildEnv = "STARTHEAP_RANGE_CHILD"
	rangeSizeEnv  = "STARTHEAP_RANGE_SIZE"
)

// A sync's process takes the range in its initialiser, frees it for the
// heap to grow into, and has the runtime's own Ps back after. Another
// command takes none, nor does a sync whose environment sets GOMAXPROCS
// or GODEBUG's gcstoptheworld (main takes it then).
func TestRangeAtInit(t *testing.T) {
	t.Parallel()
	if !wanted() || Room(Range) < Range {
		t.Skip("no huge pages on advice here, or no room for the whole range")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type child struct {
		name, command, env string
		ranged             bool
		lock               int    // bytes of the skillsync.lock in the child's folder, 0 for none
		tail               string // an argument after the command
	}
	// Several plain syncs: with two Ps held through the allocation, the
	// range stayed held in about a quarter of runs.
	var children []child
	for i := range 6 {
		children = append(children, child{"sync " + strconv.Itoa(i), "sync", "", true, 0, ""})
	}
	// A workspace with a lock: the range fits it, not Range.
	children = append(children, child{"sync, 182 KiB lock", "sync", "", true, 182 << 10, ""})
	// A command line longer than the initialiser reads: a flag past the
	// cut could name another workspace, so the whole range.
	children = append(children, child{"sync, 182 KiB lock, long line", "sync", "", true, 182 << 10, strings.Repeat("x", 5000)})
	for _, tc := range append(children, []child{
		{"sync, GOMAXPROCS=1", "sync", "GOMAXPROCS=1", false, 0, ""},
		{"sync, GOMAXPROCS=abc", "sync", "GOMAXPROCS=abc", false, 0, ""},
		{"sync, gcstoptheworld", "sync", "GODEBUG=gcstoptheworld=1", false, 0, ""},
		{"list", "list", "", false, 0, ""},
	}...) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"-test.run=^TestRangeChild$", "-test.v", tc.command}
			if tc.tail != "" {
				args = append(args, tc.tail)
			}
			dir := t.TempDir()
			want := Range
			if tc.lock > 0 {
				if err := os.WriteFile(filepath.Join(dir, lockName), make([]byte, tc.lock), 0o644); err != nil {
					t.Fatal(err)
				}
				if tc.tail == "" {
					want = rangeFor([]string{tc.command}, int64(tc.lock))
				}
			}
			// A child the machine preempted inside the range's allocation
			// keeps its range held (takeRange says so, and cmd/skillsync
			// collects it in main): under the load of a whole test run that
			// came to one child in a few dozen, so a child that fails is run
			// once more, and only one that fails twice fails the test.
			var first string
			for try := 1; try <= 2; try++ {
				cmd := exec.Command(exe, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), rangeChildEnv+"="+strconv.FormatBool(tc.ranged), rangeSizeEnv+"="+strconv.Itoa(Room(want)))
				if tc.env != "" {
					cmd.Env = append(cmd.Env, tc.env)
				}
				out, err := cmd.CombinedOutput()
				if err == nil && strings.Contains(string(out), "--- PASS: TestRangeChild") {
					if first != "" {
						t.Logf("passed once run again; the first run:\n%s", first)
					}
					return
				}
				if first == "" {
					first = fmt.Sprintf("%v\n%s", err, out)
					continue
				}
				t.Fatalf("failed twice; the first run:\n%s\nthe second: %v\n%s", first, err, out)
			}
		})
	}
}

// TestRangeChild runs only for TestRangeAtInit, in a process of its own.
func TestRangeChild(t *testing.T) {
	wantRanged, ok := os.LookupEnv(rangeChildEnv)
	if !ok {
		t.Skip("run by TestRangeAtInit")
	}
	if got := strconv.FormatBool(Ranged()); got != wantRanged {
		args, _ := commandLine()
		t.Fatalf("Ranged() = %s for the command line %q", got, args)
	}
	if !Ranged() {
		return
	}
	if want := os.Getenv(rangeSizeEnv); strconv.Itoa(RangeSize()) != want {
		t.Errorf("RangeSize() = %d, want %s", RangeSize(), want)
	}
	// The runtime's own Ps: what it gives when asked for its default.
	got := runtime.GOMAXPROCS(0)
	runtime.SetDefaultGOMAXPROCS()
	if want := runtime.GOMAXPROCS(0); got != want {
		t.Errorf("GOMAXPROCS is %d after the initialiser, want the default %d", got, want)
	}
	// An object too big for the heap's first 4 MiB lands in the range
	// (or starts in what is free just below it), which holds the advice:
	// the collection freed it, and its cleanup says so.
	select {
	case <-rangeFreed:
	case <-time.After(time.Minute):
		t.Errorf("the range's cleanup did not run: Freed() stays false")
	}
	const size = 8 << 20
	big := make([]byte, size)
	at := uintptr(unsafe.Pointer(&big[0]))
	if at+size <= ranged || at >= ranged+uintptr(rangeSize) {
		t.Errorf("an 8 MiB object at %#x, outside the range %#x-%#x: the range is still held", at, ranged, ranged+uintptr(rangeSize))
	}
	m, ok := mappingOf(t, at+size-1)
	if !ok || !strings.Contains(" "+m.flags+" ", " hg ") {
		t.Errorf("the mapping %s that holds the object has flags %q, without hg", m.span, m.flags)
	}
}

// The range fits a sync's or an update's workspace by its lock file in
// the current folder, and is Range wherever the initialiser cannot tell
// the workspace or the command reads more than its lock says.
func TestRangeFor(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, tc := range []struct {
		args []string
		lock int64
		want int
	}{
		{[]string{"sync"}, -1, Range},
		{[]string{"sync"}, 0, 64 * mib},
		{[]string{"sync", "--quiet"}, 182 << 10, 64 * mib},
		{[]string{"-q", "update"}, 300 << 10, 80 * mib}, // 32 MiB + 46.9 MiB, to 2 MiB
		{[]string{"sync"}, 1 << 20, 192 * mib},
		{[]string{"sync"}, 2 << 20, Range},
		{[]string{"sync", "--verify"}, 1 << 10, Range},
		{[]string{"sync", "--verify=false"}, 1 << 10, Range},
		{[]string{"--config", "team.yaml", "sync"}, 1 << 10, Range},
		{[]string{"--config=team.yaml", "sync"}, 1 << 10, Range},
		{[]string{"-g", "sync"}, 1 << 10, Range},
		{[]string{"sync", "-qg"}, 1 << 10, Range},
		{[]string{"sync", "--global"}, 1 << 10, Range},
		{[]string{"sync", "--", "-g"}, 1 << 10, 64 * mib},
		{[]string{"-test.run=^TestRangeChild$", "sync"}, 1 << 10, 64 * mib},
		{[]string{"-g=true", "sync"}, 1 << 10, Range},
		{[]string{"sync", "-qg=1"}, 1 << 10, Range},
		{[]string{"sync", "-q=true"}, 1 << 10, 64 * mib},
		{[]string{"sync"}, 1 << 59, Range}, // a sparse lock: no overflow
		{[]string{"sync"}, 1<<63 - 1, Range},
		{[]string{"fetch"}, 1 << 10, Range},
		{[]string{"verify"}, 1 << 10, Range},
	} {
		if got := rangeFor(tc.args, tc.lock); got != tc.want {
			t.Errorf("rangeFor(%q, %d) = %d MiB, want %d MiB", tc.args, tc.lock, got/mib, tc.want/mib)
		}
	}
}

// Freed says free only once the range's channel is closed, and never
// for no range. Not parallel: it sets the package's record of the range.
func TestFreed(t *testing.T) {
	old := rangeFreed
	t.Cleanup(func() { rangeFreed = old })
	rangeFreed = nil
	if Freed() {
		t.Errorf("Freed() = true with no range taken")
	}
	rangeFreed = make(chan struct{})
	if Freed() {
		t.Errorf("Freed() = true before the range's cleanup ran")
	}
	close(rangeFreed)
	if !Freed() {
		t.Errorf("Freed() = false after the range's cleanup ran")
	}
}

// TestWithdrawCoversTheArenasBetween: the advice is withdrawn from every
// arena from the first to the last given, in either order, so a heap
// that moved on to the next arena since the initialiser advised the
// first keeps no advice in either.
func TestWithdrawCoversTheArenasBetween(t *testing.T) {
	mem, err := syscall.Mmap(-1, 0, 4*arenaSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(mem)
	base := (uintptr(unsafe.Pointer(&mem[0])) + arenaSize - 1) &^ (arenaSize - 1)
	arenas := []uintptr{base, base + arenaSize, base + 2*arenaSize}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base, 3*arenaSize, madvHugepage); errno != 0 {
		t.Skip("no huge page advice here:", errno)
	}
	withdraw(arenas[2], arenas[0])
	for i, a := range arenas {
		m, ok := mappingOf(t, a+arenaSize/2)
		if !ok || strings.Contains(" "+m.flags+" ", " hg ") || !strings.Contains(" "+m.flags+" ", " nh ") {
			t.Errorf("arena %d: mapping %s has flags %q, want nh and no hg", i, m.span, m.flags)
		}
	}
}
