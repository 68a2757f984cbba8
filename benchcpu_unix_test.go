//go:build unix

package skillsync_test

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU the process and the children it
// waited for (git upload-pack for the remote's refs) have spent so far.
func processCPU() (user, system time.Duration) {
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) != nil {
			return 0, 0
		}
		user += time.Duration(ru.Utime.Nano())
		system += time.Duration(ru.Stime.Nano())
	}
	return user, system
}
