//go:build linux

package starttext

import (
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skillsync/skillsync/internal/testmain"
)

// TestMain runs the tests without the race detector's second of sleep
// at exit (internal/testmain says why).
func TestMain(m *testing.M) { testmain.Main(m) }

func TestFirstExecutable(t *testing.T) {
	tests := []struct {
		name   string
		maps   string
		lo, hi uint64
		ok     bool
	}{
		{"a static program", "00400000-00fc8000 r-xp 00000000 fe:00 11068610   /usr/bin/skillsync\n" +
			"00fc8000-01cab000 r--p 00bc8000 fe:00 11068610   /usr/bin/skillsync\n" +
			"7ffc5bbd0000-7ffc5bbd2000 r-xp 00000000 00:00 0   [vdso]\n", 0x400000, 0xfc8000, true},
		{"a program that links libraries, placed higher up", "55d0c1a00000-55d0c1a28000 r--p 00000000 fe:00 12 /usr/bin/x\n" +
			"55d0c1a28000-55d0c1b9d000 r-xp 00028000 fe:00 12 /usr/bin/x\n" +
			"7f1e2c228000-7f1e2c3bd000 r-xp 00028000 fe:00 13 /usr/lib/libc.so.6\n", 0x55d0c1a28000, 0x55d0c1b9d000, true},
		{"no executable mapping", "00400000-00fc8000 r--p 00000000 fe:00 1 /x\n", 0, 0, false},
		{"the last line cut short", "00400000-00fc8000 r--p 0 fe:00 1 /x\n00fc8000-01cab000 r-x", 0, 0, false},
		{"lines that are not mappings", "garbage\n-00fc8000 r-xp\n00400000 r-xp\n00fc8000-00400000 r-xp 0\n" +
			"00000000000000000400000-00fc8000 r-xp 0\n01000000-02000000 r-xp 0\n", 0x1000000, 0x2000000, true},
		{"nothing", "", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if uint64(uintptr(tt.hi)) != tt.hi {
				t.Skip("an address wider than this system's")
			}
			lo, hi, ok := firstExecutable(tt.maps)
			if uint64(lo) != tt.lo || uint64(hi) != tt.hi || ok != tt.ok {
				t.Errorf("firstExecutable = %#x, %#x, %v; want %#x, %#x, %v", lo, hi, ok, tt.lo, tt.hi, tt.ok)
			}
		})
	}
}

// TestPopulateMapsThisProgramsText: the range found holds this program's
// code, and once populate has run every page of it is mapped (its Rss in
// /proc/self/smaps is its size), where the kernel has the advice.
func TestPopulateMapsThisProgramsText(t *testing.T) {
	buf := make([]byte, 4096)
	n, _ := readAll("/proc/self/maps", buf)
	lo, hi, ok := firstExecutable(string(buf[:n]))
	pc := reflect.ValueOf(TestPopulateMapsThisProgramsText).Pointer()
	if !ok || pc < lo || pc >= hi {
		t.Fatalf("the text found is %#x-%#x (%v), which does not hold this test at %#x", lo, hi, ok, pc)
	}
	if err := populate(); errors.Is(err, syscall.EINVAL) {
		t.Skip("this kernel has no MADV_POPULATE_READ")
	} else if err != nil {
		t.Fatal(err)
	}
	size, rss := smapsOf(t, lo)
	if size == 0 || rss != size {
		t.Errorf("the text's mapping after populate: %d KiB of %d KiB mapped, want all", rss, size)
	}
}

// readAll reads path, as the package reads it, through the os package.
func readAll(path string, buf []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return f.Read(buf)
}

// smapsOf returns the Size and Rss, in KiB, of the mapping that starts at
// lo in /proc/self/smaps.
func smapsOf(t *testing.T, lo uintptr) (size, rss int) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
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
