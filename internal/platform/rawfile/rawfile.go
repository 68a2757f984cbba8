//go:build unix

// Package rawfile reads small system files with system calls alone, for
// the initialisers that must run before most others (startheap,
// starttext): Go runs a package's initialiser once its imports' are
// done, so the fewer its imports the earlier it runs, and os or strings
// would move it back by dozens of packages.
package rawfile

import "syscall"

// Read returns what one read of the file at path puts in buf, "" when it
// cannot be read.
func Read(path string, buf []byte) string {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, buf)
	if err != nil || n <= 0 {
		return ""
	}
	return string(buf[:n])
}
