//go:build unix

package platform

import (
	"os"
	"syscall"
)

// PrivateDir reports whether path is a directory itself (not a link to
// one), owned by this process's user, that no other user may write: what
// is in it was put there by this user. A shared /tmp is not one.
func PrivateDir(path string) bool {
	info, err := os.Lstat(path)
	if err != nil || !info.IsDir() || info.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == euid()
}
