//go:build !unix

package testmain

// reexec does nothing where a process cannot be replaced: the tests run
// with the detector's pause at exit.
func reexec(exe string, args, env []string) {}
