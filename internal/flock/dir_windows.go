package flock

import (
	"context"
	"path/filepath"
	"time"
)

// AcquireDir takes an exclusive lock for the folder dir, waiting up to
// wait. Windows locks no folder, so the lock is the file name in it,
// which holds no record of its holder (AcquireBare).
func AcquireDir(ctx context.Context, dir, name string, wait time.Duration) (*Lock, error) {
	return AcquireBare(ctx, filepath.Join(dir, name), wait)
}
