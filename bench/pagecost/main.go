//go:build linux

// Command pagecost measures what a process pays the first time it
// touches memory, the costs bench/run.sh's figures are made of on a
// virtual machine that runs page faults through its hypervisor:
//
//	pagecost [-mib N] [-wait D] [-file PATH]
//
// It prints, one line each: fresh anonymous memory in 4 KiB pages (per
// page), in transparent huge pages touched right after the same amount
// was freed (per 2 MiB), the same after waiting D (default 10s: long
// enough for a host with free page reporting to have taken it back),
// and the pages of a file already in the page cache (PATH, default this
// program's own binary; per 4 KiB). Each is the median of five rounds of
// N MiB (default 16). Huge pages need the system's transparent huge
// pages set to "madvise" or "always"; where they are not given, that
// line measures 4 KiB pages too.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"
	"unsafe"
)

const (
	page     = 4 << 10
	hugePage = 2 << 20
	rounds   = 5
)

func main() {
	mib := flag.Int("mib", 16, "MiB touched in each round")
	wait := flag.Duration("wait", 10*time.Second, "how long freed memory rests before the last huge-page measure")
	file := flag.String("file", "", "a file to map (default: this program's binary)")
	flag.Parse()
	if *mib < 2 || *mib%2 != 0 {
		fail(fmt.Errorf("-mib %d: an even number of MiB, at least 2", *mib))
	}
	if *file == "" {
		exe, err := os.Executable()
		if err != nil {
			fail(err)
		}
		*file = exe
	}
	size := *mib << 20
	anon, err := median(func() (time.Duration, error) { return touchAnon(size, false) })
	if err != nil {
		fail(err)
	}
	hot, err := median(func() (time.Duration, error) {
		if _, err := touchAnon(size, true); err != nil { // freed just before
			return 0, err
		}
		return touchAnon(size, true)
	})
	if err != nil {
		fail(err)
	}
	cold, err := median(func() (time.Duration, error) {
		if _, err := touchAnon(size, true); err != nil {
			return 0, err
		}
		time.Sleep(*wait)
		return touchAnon(size, true)
	})
	if err != nil {
		fail(err)
	}
	filed, pages, err := touchFile(*file)
	if err != nil {
		fail(err)
	}
	perPage := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(n) }
	fmt.Printf("anonymous, 4 KiB pages:        %8.1f us a page\n", perPage(anon, size/page))
	fmt.Printf("anonymous, huge, just freed:   %8.3f ms a 2 MiB page\n", perPage(hot, size/hugePage)/1e3)
	fmt.Printf("anonymous, huge, after %-6s  %8.3f ms a 2 MiB page\n", *wait, perPage(cold, size/hugePage)/1e3)
	fmt.Printf("file in the page cache:        %8.1f us a page (%s, %d pages)\n", perPage(filed, pages), *file, pages)
}

// touchAnon maps size bytes of fresh memory, with the huge-page advice
// when huge, writes a byte in each 4 KiB page, unmaps it, and returns
// how long the writes took.
func touchAnon(size int, huge bool) (time.Duration, error) {
	// Mapped 2 MiB more, so that an aligned range of size fits in it.
	mem, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("map %d bytes: %w", size, err)
	}
	defer syscall.Munmap(mem)
	off := alignOffset(mem)
	b := mem[off : off+size]
	if huge {
		if err := syscall.Madvise(b, 14); err != nil { // MADV_HUGEPAGE
			return 0, fmt.Errorf("advise huge pages: %w", err)
		}
	}
	start := time.Now()
	for i := 0; i < len(b); i += page {
		b[i] = 1
	}
	return time.Since(start), nil
}

// touchFile reads the file at path whole (into the page cache), maps it,
// reads a byte of each page, and returns how long the reads of the
// mapping took and how many pages it has.
func touchFile(path string) (time.Duration, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	n := len(data) &^ (page - 1)
	if n == 0 {
		return 0, 0, fmt.Errorf("%s: less than a page", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return 0, 0, fmt.Errorf("map %s: %w", path, err)
	}
	defer syscall.Munmap(mem)
	start := time.Now()
	sum := byte(0)
	for i := 0; i < n; i += page {
		sum += mem[i]
	}
	d := time.Since(start)
	// Used, or the compiler drops the loads that are the measure.
	runtime.KeepAlive(sum)
	return d, n / page, nil
}

// alignOffset is how far into mem the first 2 MiB boundary is.
func alignOffset(mem []byte) int {
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	return int((hugePage - addr%hugePage) % hugePage)
}

// median runs measure rounds times and returns the median.
func median(measure func() (time.Duration, error)) (time.Duration, error) {
	var all []time.Duration
	for range rounds {
		d, err := measure()
		if err != nil {
			return 0, err
		}
		all = append(all, d)
	}
	slices.Sort(all)
	return all[len(all)/2], nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pagecost:", err)
	os.Exit(1)
}
