//go:build unix

package flock

import (
	"context"
	"fmt"
	"os"
	"time"
)

// AcquireDir takes an exclusive lock on the folder dir itself, waiting up
// to wait, and leaves nothing in it: a folder that may be committed (a
// target) stays as it was. name is the lock file that systems which
// cannot lock a folder keep in it instead (see dir_windows.go).
func AcquireDir(ctx context.Context, dir, name string, wait time.Duration) (*Lock, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	return hold(ctx, f, dir, wait, true, false)
}
