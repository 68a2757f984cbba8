//go:build unix

package platform

import (
	"io/fs"
	"os"
	"syscall"
)

// OwnedByMe reports whether info's file belongs to the effective user
// running this process; true where the system does not tell.
func OwnedByMe(info fs.FileInfo) bool {
	if st, is := info.Sys().(*syscall.Stat_t); is {
		return st.Uid == uint32(os.Geteuid())
	}
	return true
}

// Links returns how many names info's file has (its hard links); ok is
// false where the system does not tell.
func Links(info fs.FileInfo) (n uint64, ok bool) {
	if st, is := info.Sys().(*syscall.Stat_t); is {
		return uint64(st.Nlink), true
	}
	return 0, false
}
