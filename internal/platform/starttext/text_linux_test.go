//go:build linux

package starttext

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillsync/skillsync/internal/testmain"
)

// TestMain runs the tests without the race detector's second of sleep
// at exit (internal/testmain says why). That the initialiser maps the
// text is cmd/skillsync's TestProcessMapsItsTextAhead: this package's
// test binary is small enough for its start to map it all by itself.
func TestMain(m *testing.M) { testmain.Main(m) }

func TestExecutableHolding(t *testing.T) {
	static := "00400000-00fc8000 r-xp 00000000 fe:00 11068610   /usr/bin/skillsync\n" +
		"00fc8000-01cab000 r--p 00bc8000 fe:00 11068610   /usr/bin/skillsync\n" +
		"7ffc5bbd0000-7ffc5bbd2000 r-xp 00000000 00:00 0   [vdso]\n"
	// The older layout, where the stack is unlimited: the libraries and
	// the vDSO below a position-independent program.
	legacy := "14b14c267000-14b14c28f000 r--p 00000000 fe:00 13 /usr/lib/libc.so.6\n" +
		"14b14c28f000-14b14c3e5000 r-xp 00028000 fe:00 13 /usr/lib/libc.so.6\n" +
		"14a33de9c000-14a33de9e000 r-xp 00000000 00:00 0  [vdso]\n" +
		"55d95162a000-55d951b2a000 r-xp 00000000 fe:00 12 /usr/bin/skillsync (deleted)\n"
	tests := []struct {
		name   string
		maps   string
		pc     uint64
		lo, hi uint64
		ok     bool
	}{
		{"a static program", static, 0x500000, 0x400000, 0xfc8000, true},
		{"the first byte", static, 0x400000, 0x400000, 0xfc8000, true},
		{"the end is outside", static, 0xfc8000, 0, 0, false},
		{"in read-only data", static, 0x1000000, 0, 0, false},
		{"below libraries and the vDSO", legacy, 0x55d95162b000, 0x55d95162a000, 0x55d951b2a000, true},
		{"the last line cut short", "00400000-00fc8000 r--p 0 fe:00 1 /x\n00fc8000-01cab000 r-x", 0x1000000, 0, 0, false},
		{"lines that are not mappings", "garbage\n-00fc8000 r-xp\n00400000 r-xp\n00fc8000-00400000 r-xp 0\n" +
			"00000000000000000400000-00fc8000 r-xp 0\n01000000-02000000 r-xp 0\n", 0x500000, 0, 0, false},
		{"nothing", "", 0x500000, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if uint64(uintptr(tt.pc)) != tt.pc {
				t.Skip("an address wider than this system's")
			}
			lo, hi, ok := executableHolding(tt.maps, uintptr(tt.pc))
			if uint64(lo) != tt.lo || uint64(hi) != tt.hi || ok != tt.ok {
				t.Errorf("executableHolding = %#x, %#x, %v; want %#x, %#x, %v", lo, hi, ok, tt.lo, tt.hi, tt.ok)
			}
		})
	}
}

// TestPopulateMapsThisProgramsText: the range found holds this program's
// code, and once populate has run every page of it is mapped (its Rss in
// /proc/self/smaps is its size), where the kernel has the advice. Its
// pages are let go first (MADV_DONTNEED, which a text's unchanged pages
// come back from the page cache after), as the initialiser mapped them
// already.
func TestPopulateMapsThisProgramsText(t *testing.T) {
	if !hasPopulateRead() {
		t.Skip("this kernel has no MADV_POPULATE_READ")
	}
	lo, hi, ok := textRange()
	pc, _, _, _ := runtime.Caller(0)
	if !ok || pc < lo || pc >= hi {
		t.Fatalf("the text found is %#x-%#x (%v), which does not hold this test at %#x", lo, hi, ok, pc)
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_DONTNEED); errno != 0 {
		t.Fatal(errno)
	}
	if size, rss := smapsOf(t, lo); rss >= size {
		t.Fatalf("the text after MADV_DONTNEED: %d KiB of %d KiB mapped; the test cannot tell", rss, size)
	}
	if err := populate(); err != nil {
		t.Fatal(err)
	}
	if size, rss := smapsOf(t, lo); size == 0 || rss != size {
		t.Errorf("the text's mapping after populate: %d KiB of %d KiB mapped, want all", rss, size)
	}
}

// hasPopulateRead reports whether the kernel takes MADV_POPULATE_READ, on
// a page of anonymous memory.
func hasPopulateRead() bool {
	page, err := syscall.Mmap(-1, 0, os.Getpagesize(), syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return false
	}
	defer syscall.Munmap(page)
	// The system's own value, not the package's: a wrong one there
	// must fail the tests, not skip them.
	err = syscall.Madvise(page, unix.MADV_POPULATE_READ)
	return !errors.Is(err, syscall.EINVAL)
}

// smapsOf is smaps, failing the test when smaps cannot be read.
func smapsOf(t *testing.T, lo uintptr) (size, rss int) {
	t.Helper()
	size, rss = smaps(lo)
	if size < 0 {
		t.Fatal("cannot read /proc/self/smaps")
	}
	return size, rss
}

// smaps returns the Size and Rss, in KiB, of the mapping that starts at
// lo in /proc/self/smaps; -1 when the file cannot be read.
func smaps(lo uintptr) (size, rss int) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return -1, -1
	}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if start, _, isRange := strings.Cut(f[0], "-"); isRange {
			// The line that opens a mapping: its range, its permissions...
			at, err := strconv.ParseUint(start, 16, 64)
			in = err == nil && uintptr(at) == lo
			continue
		}
		if in && len(f) == 3 && f[2] == "kB" {
			v, _ := strconv.Atoi(f[1])
			switch f[0] {
			case "Size:":
				size = v
			case "Rss:":
				rss = v
			}
		}
	}
	return size, rss
}
