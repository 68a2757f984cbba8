package flock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// AcquireDir takes an exclusive lock for the folder dir, waiting up to
// wait. Windows locks no folder, so the lock is the file name in it,
// which holds no record of its holder (AcquireBare).
func AcquireDir(ctx context.Context, dir, name string, wait time.Duration) (*Lock, error) {
	return AcquireBare(ctx, filepath.Join(dir, name), wait)
}

// openTreeLock opens the lock file name in the folder t holds.
func openTreeLock(t *platform.Tree, name string) (*os.File, string, error) {
	path := filepath.Join(t.Path(), name)
	f, err := t.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, path, err
	}
	if err := regularLock(f, path); err != nil {
		f.Close()
		return nil, path, err
	}
	return f, path, nil
}

// regularLock refuses f, a lock file opened at path, unless it is a
// regular file: a FIFO or a folder planted in its place is no lock.
func regularLock(f *os.File, path string) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, info.Mode().Type())
	}
	return nil
}
