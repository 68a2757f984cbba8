//go:build unix

package platform

import (
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// euid is the process's effective user, asked once: a sync of a
// thousand changed skills asks it of every kept file and folder it looks
// at, thousands of system calls. skillsync never changes its user.
var euid = sync.OnceValue(os.Geteuid)

// OwnedByMe reports whether info's file belongs to the effective user
// running this process; true where the system does not tell.
func OwnedByMe(info fs.FileInfo) bool {
	switch st := info.Sys().(type) {
	case *syscall.Stat_t:
		return st.Uid == uint32(euid())
	case *unix.Stat_t: // StatDir and Tree
		return st.Uid == uint32(euid())
	}
	return true
}

// Links returns how many names info's file has (its hard links); ok is
// false where the system does not tell.
func Links(info fs.FileInfo) (n uint64, ok bool) {
	switch st := info.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(st.Nlink), true
	case *unix.Stat_t: // StatDir and Tree
		return uint64(st.Nlink), true
	}
	return 0, false
}
