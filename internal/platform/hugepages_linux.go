package platform

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the transparent huge page of x86-64 and arm64 with 4 KiB
// pages; a system with another size just gets the advice on fewer bytes.
const hugePageSize = 2 << 20

// AdviseHugePages asks the kernel to back the whole 2 MiB pages within b
// with transparent huge pages when they are first touched
// (madvise(MADV_HUGEPAGE)), and reports whether it took the advice. With
// the system set to "madvise" (a common default) nothing gets huge pages
// without it; set to "never", the advice is ignored.
func AdviseHugePages(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + hugePageSize - 1) &^ (hugePageSize - 1)
	end := (p + uintptr(len(b))) &^ (hugePageSize - 1)
	if start >= end {
		return false
	}
	return unix.Madvise(b[start-p:end-p], unix.MADV_HUGEPAGE) == nil
}

// thpEnabled is where Linux says when it gives transparent huge pages.
const thpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled"

// overcommit is where Linux says how it counts the memory programs map.
const overcommit = "/proc/sys/vm/overcommit_memory"

// onAdvice reports whether the system, by its setting enabled, gives
// transparent huge pages to memory advised so, and only to it: with
// "always" every process's memory gets them without advice, with "never"
// none does.
func onAdvice(enabled string) bool { return strings.Contains(enabled, "[madvise]") }

// HugePageRoom returns how much of want a program should map ahead,
// untouched, to advise huge pages on: none where the system gives none on
// advice alone (onAdvice), where it counts every mapping against a
// commit limit (overcommit_memory 2), or where the process's address
// space is capped (RLIMIT_AS): an untouched range still counts there, and
// a Go program that cannot map memory dies. Else want, up to an eighth
// of the machine's memory.
func HugePageRoom(want int) int {
	enabled, err := os.ReadFile(thpEnabled)
	if err != nil {
		return 0
	}
	mode, err := os.ReadFile(overcommit)
	if err != nil {
		return 0
	}
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		return 0
	}
	var space unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &space); err != nil {
		return 0
	}
	capped := space.Cur != unix.RLIM_INFINITY
	return hugePageRoom(want, string(enabled), string(mode), capped, uint64(info.Totalram)*uint64(info.Unit))
}

// hugePageRoom is HugePageRoom from what the system says: its huge page
// setting, its overcommit mode, whether the address space is capped and
// its memory in bytes.
func hugePageRoom(want int, enabled, overcommitMode string, capped bool, memory uint64) int {
	if !onAdvice(enabled) || strings.TrimSpace(overcommitMode) == "2" || capped || want <= 0 {
		return 0
	}
	return int(min(uint64(want), memory/8))
}
