package platform

import (
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
