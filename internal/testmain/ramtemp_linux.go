package testmain

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// ramDir is where the tests' temporary folders go when it is a tmpfs
// with room for them.
const ramDir = "/dev/shm"

// minRAMFree is the room ramDir must have: the tests write a few hundred
// MiB at once (repositories, caches, a 64 MiB blob, a PostgreSQL cluster).
const minRAMFree = 4 << 30

// tmpfsMagic is statfs's f_type for a tmpfs.
const tmpfsMagic = 0x01021994

// ramTemp returns a folder of this user's in ramDir for the tests'
// temporary files, or "" where there is none with room.
func ramTemp() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(ramDir, &st); err != nil || st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < minRAMFree {
		return ""
	}
	dir := filepath.Join(ramDir, "skillsync-tests-"+strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	// A folder another user made, or one that is not a folder, is not ours.
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() || !ownedBy(info, os.Getuid()) {
		return ""
	}
	// Others may pass through, as through /tmp: a test run as root starts
	// PostgreSQL as nobody, in a folder of its own below.
	if err := os.Chmod(dir, 0o755); err != nil {
		return ""
	}
	return dir
}

// ownedBy reports whether info's owner is uid.
func ownedBy(info os.FileInfo, uid int) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uint32(uid)
}
