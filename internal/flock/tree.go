package flock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// AcquireTree is AcquireDir for the folder t holds open: the lock is
// taken on that very folder (on Windows, on the file name in it, opened
// through t), never on whatever its path leads to by then, so the folder
// a writer changes through t is the one its lock covers. waited reports
// whether another holder had it first: the caller may then want to look
// at the path again, since that wait was time for the folder to be
// swapped.
func AcquireTree(ctx context.Context, t *platform.Tree, name string, wait time.Duration) (l *Lock, waited bool, err error) {
	f, path, err := openTreeLock(t, name)
	if err != nil {
		return nil, false, fmt.Errorf("open lock: %w", err)
	}
	err = platform.TryLock(f, true)
	switch {
	case err == nil:
		return &Lock{f: f}, false, nil
	case !errors.Is(err, platform.ErrWouldBlock):
		f.Close()
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	l, err = hold(ctx, f, path, wait, true, false)
	return l, true, err
}
