//go:build unix

package testmain

import "syscall"

// reexec replaces the process with exe, keeping its id, so go test
// waits for the same process and reads the same output.
func reexec(exe string, args, env []string) {
	_ = syscall.Exec(exe, args, env)
}
