//go:build unix

// Package rawfile reads small system files with system calls alone, for
// the initialisers that must run before most others (startheap,
// starttext): Go runs a package's initialiser once its imports' are
// done, so the fewer its imports the earlier it runs, and os or strings
// would move it back by dozens of packages.
package rawfile

import "syscall"

// Read returns the file at path as far as it fits in buf: "" when it
// cannot be read, and cut where buf is full. A file of /proc comes a
// line or a page a read, so it is read to its end.
func Read(path string, buf []byte) string {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return string(buf[:n])
}
