//go:build unix

package platform

import (
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// euid is the process's effective user, asked once: a sync of a
// thousand changed skills asks it of every kept file and folder it looks
// at, thousands of system calls. skillsync never changes its user.
var euid = sync.OnceValue(os.Geteuid)

// OwnedByMe reports whether info's file belongs to the effective user
// running this process; true where the system does not tell.
func OwnedByMe(info fs.FileInfo) bool {
	if st, is := info.Sys().(*syscall.Stat_t); is {
		return st.Uid == uint32(euid())
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
