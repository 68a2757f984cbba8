//go:build unix

package daemon

import (
	"syscall"
	"time"
)

// processCPU is the user + system CPU the process and the children it
// waited for (git upload-pack for the remote's refs) have spent so far.
func processCPU() time.Duration {
	var sum time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) != nil {
			return 0
		}
		sum += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return sum
}
