//go:build amd64 || arm64

package startheap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
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
