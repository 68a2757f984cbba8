//go:build linux

package main

import (
	"os"
	"testing"
	"unsafe"

	"github.com/skillsync/skillsync/internal/testmain"
)

// TestMain runs the tests without the race detector's second of sleep
// at exit (internal/testmain says why).
func TestMain(m *testing.M) { testmain.Main(m) }

// The measures run and report time spent on pages that exist: a small
// mapping of each kind, and this test binary as the file.
func TestMeasuresTouchWhatTheyMap(t *testing.T) {
	for _, huge := range []bool{false, true} {
		d, err := touchAnon(2<<20, huge)
		if err != nil || d <= 0 {
			t.Errorf("touchAnon(2 MiB, huge %v) = %v, %v", huge, d, err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	d, pages, err := touchFile(exe)
	if err != nil || d <= 0 || pages != int(info.Size()/page) {
		t.Errorf("touchFile(%s) = %v, %d pages, %v; want %d pages", exe, d, pages, err, info.Size()/page)
	}
	if _, _, err := touchFile(os.DevNull); err == nil {
		t.Error("touchFile of an empty file did not fail")
	}
}

func TestAlignOffsetReachesABoundary(t *testing.T) {
	mem := make([]byte, 3*hugePage)
	off := alignOffset(mem)
	if off < 0 || off >= hugePage {
		t.Fatalf("alignOffset = %d, want within one huge page", off)
	}
	if addr := uintptr(unsafe.Pointer(&mem[off])); addr%hugePage != 0 {
		t.Errorf("mem + %d = %#x, not on a 2 MiB boundary", off, addr)
	}
}
