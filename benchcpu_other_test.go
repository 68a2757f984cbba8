//go:build !unix

package skillsync_test

import "time"

// processCPU is 0 where the process's CPU time is not read: the benchmark
// then reports no CPU figures.
func processCPU() (user, system time.Duration) { return 0, 0 }
