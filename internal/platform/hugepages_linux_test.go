package platform

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// The advice lands on the memory: the mapping that holds the slice's
// first whole 2 MiB page is marked for huge pages (VmFlags "hg"), and a
// slice with no whole huge page in it is not advised.
func TestAdviseHugePages(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(thpEnabled); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	if AdviseHugePages(make([]byte, 4096)) {
		t.Error("a 4 KiB slice was advised")
	}
	b := make([]byte, 3*hugePageSize)
	if !AdviseHugePages(b) {
		t.Fatal("AdviseHugePages refused a 6 MiB slice")
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + hugePageSize - 1) &^ (hugePageSize - 1)
	flags, err := vmFlags(start)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping at %#x has VmFlags %q, without hg", start, flags)
	}
}

// A range is mapped ahead for huge pages only where the system gives
// them on advice and does not count untouched memory against a limit,
// and never more than an eighth of the machine's memory.
func TestHugePageRoom(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	for _, tc := range []struct {
		name, enabled, overcommit string
		capped                    bool
		memory                    uint64
		want                      int
	}{
		{"on advice", "always [madvise] never\n", "0\n", false, 24 * gib, 256 << 20},
		{"always", "[always] madvise never\n", "0\n", false, 24 * gib, 0},
		{"never", "always madvise [never]\n", "0\n", false, 24 * gib, 0},
		{"no overcommit", "always [madvise] never\n", "2\n", false, 24 * gib, 0},
		{"always overcommit", "always [madvise] never\n", "1\n", false, 24 * gib, 256 << 20},
		{"an address space cap", "always [madvise] never\n", "0\n", true, 24 * gib, 0},
		{"a small machine", "always [madvise] never\n", "0\n", false, gib, gib / 8},
	} {
		if got := hugePageRoom(256<<20, tc.enabled, tc.overcommit, tc.capped, tc.memory); got != tc.want {
			t.Errorf("%s: hugePageRoom = %d, want %d", tc.name, got, tc.want)
		}
	}
	// This machine's own answer agrees with what it says.
	enabled, err := os.ReadFile(thpEnabled)
	if err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	mode, err := os.ReadFile(overcommit)
	if err != nil {
		t.Fatal(err)
	}
	got := HugePageRoom(256 << 20)
	var space syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &space); err != nil {
		t.Fatal(err)
	}
	if !onAdvice(string(enabled)) || strings.TrimSpace(string(mode)) == "2" || space.Cur != math.MaxUint64 {
		if got != 0 {
			t.Errorf("HugePageRoom = %d on a system set to %q, overcommit %q", got, enabled, mode)
		}
		return
	}
	if got <= 0 || got > 256<<20 {
		t.Errorf("HugePageRoom = %d, want up to 256 MiB", got)
	}
}

// vmFlags returns the VmFlags line of the mapping that holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", addr)
}
