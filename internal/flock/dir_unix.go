//go:build unix

package flock

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// AcquireDir takes an exclusive lock on the folder dir itself, waiting up
// to wait, and leaves nothing in it: a folder that may be committed (a
// target) stays as it was. name is the lock file that systems which
// cannot lock a folder keep in it instead (see dir_windows.go). Only a
// folder is opened: a FIFO put in its place would hold the open until a
// writer came, and a link is not followed.
func AcquireDir(ctx context.Context, dir, name string, wait time.Duration) (*Lock, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	return hold(ctx, f, dir, wait, true, false)
}

// openTreeLock opens the folder t holds, to be locked itself.
func openTreeLock(t *platform.Tree, _ string) (*os.File, string, error) {
	f, err := t.Open()
	return f, t.Path(), err
}
