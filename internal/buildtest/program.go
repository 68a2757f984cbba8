package buildtest

import (
	"os"
	"syscall"
)

// WriteProgram writes data to path, with perm, as a program the caller
// then runs. No process is forked while the file is open for writing: a
// child forked then holds it open until its own exec, and running the
// program meanwhile fails with "text file busy" (ETXTBSY,
// golang.org/issue/22315), as a pinned test program once did in CI
// while tests beside it started git and sync children.
func WriteProgram(path string, data []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, perm)
}
