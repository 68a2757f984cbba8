//go:build unix

package git

import (
	"os"
	"syscall"
)

// ownedByMe reports whether dir belongs to the user running skillsync;
// for another's repository git's safe.directory rules decide, so git
// upload-pack is asked.
func ownedByMe(dir string) bool {
	info, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
