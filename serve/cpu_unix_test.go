//go:build unix

package serve

import (
	"syscall"
	"time"
)

// cpuTime is the user and system CPU the process has spent so far: a
// measure of work that other processes on a busy machine do not slow.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
