// Package flock takes file locks (flock on Unix, LockFileEx on Windows,
// through internal/platform) that say who holds
// them: the file records the holder's pid, host and start time, so a
// process that waits can tell the user which process to look at.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/platform"
)

// ErrLocked is returned, wrapped in a *HeldError, when the lock is still
// held after the wait.
var ErrLocked = errors.New("lock is held by another process")

// HeldError says who holds a lock that could not be taken.
type HeldError struct {
	Path string
	PID  int    // 0 when the file does not say
	Info string // what the holder wrote, for messages
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is held by pid %d (%s)", e.Path, e.PID, e.Info)
	}
	return e.Path + " is held by another process"
}

func (e *HeldError) Unwrap() error { return ErrLocked }

// Lock is a held lock. Close releases it.
type Lock struct {
	f *os.File
}

// pollInterval is how often a waiting Acquire tries again. flock has no
// timeout of its own; polling keeps the wait cancellable.
const pollInterval = 25 * time.Millisecond

// Acquire takes an exclusive lock on path, creating the file, and records
// this process in it. A symbolic link or anything but a regular file at
// path is refused with an error naming it. It waits up to wait (0: try once) or until ctx is
// done. A lock that stays held gives a *HeldError.
func Acquire(ctx context.Context, path string, wait time.Duration) (*Lock, error) {
	return acquire(ctx, path, wait, true)
}

// AcquireShared takes a shared lock on path: many readers may hold it at
// once, never alongside an exclusive holder.
func AcquireShared(ctx context.Context, path string, wait time.Duration) (*Lock, error) {
	return acquire(ctx, path, wait, false)
}

// AcquireBare takes an exclusive lock on path as Acquire does, but writes
// no record into the file: for a lock kept in a folder that may be
// committed, which a record would change at every lock taken.
func AcquireBare(ctx context.Context, path string, wait time.Duration) (*Lock, error) {
	return take(ctx, path, wait, true, false)
}

func acquire(ctx context.Context, path string, wait time.Duration, exclusive bool) (*Lock, error) {
	return take(ctx, path, wait, exclusive, exclusive)
}

func take(ctx context.Context, path string, wait time.Duration, exclusive, record bool) (*Lock, error) {
	// A link planted at path would have the holder's record truncated
	// into whatever it points to: it is refused, never followed.
	f, err := atomicfile.OpenNoFollow(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	return hold(ctx, f, path, wait, exclusive, record)
}

// hold locks f, the open lock file or folder at path, waiting up to wait.
func hold(ctx context.Context, f *os.File, path string, wait time.Duration, exclusive, record bool) (*Lock, error) {
	var err error
	deadline := time.Now().Add(wait)
	for {
		err = platform.TryLock(f, exclusive)
		if err == nil {
			break
		}
		if !errors.Is(err, platform.ErrWouldBlock) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			held := holder(f, path)
			f.Close()
			return nil, held
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
		case <-time.After(pollInterval):
		}
	}
	if record {
		writeRecord(f)
	}
	return &Lock{f: f}, nil
}

// writeRecord writes who holds the lock into its file, over what an
// earlier holder wrote, and cuts the file to the record's length, or
// empties it when the record cannot be written: a stale record would name
// a process that no longer holds it. Emptying it first would cost, on
// ext4, a discard of its block (mounted with discard) and a write-back
// when it is closed (auto_da_alloc), at every lock taken. A lock file
// with another name (a hard link planted in its place) gets no record:
// it would be written into that other file.
func writeRecord(f *os.File) {
	info, err := f.Stat()
	if err != nil {
		return
	}
	if n, ok := platform.Links(info); ok && n != 1 {
		return
	}
	host, _ := os.Hostname()
	record := fmt.Sprintf("%d %s %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if _, err := f.WriteAt([]byte(record), 0); err != nil {
		_ = f.Truncate(0)
		return
	}
	_ = f.Truncate(int64(len(record)))
}

// holder reads who holds the lock, as far as the file says.
func holder(f *os.File, path string) *HeldError {
	e := &HeldError{Path: path}
	// A lock file with another name holds no record of this lock's
	// holders (writeRecord), whatever its content says.
	if info, err := f.Stat(); err != nil {
		return e
	} else if n, ok := platform.Links(info); ok && n != 1 {
		return e
	}
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	fields := strings.Fields(string(buf[:n]))
	if len(fields) > 0 {
		e.PID, _ = strconv.Atoi(fields[0])
		if len(fields) >= 3 {
			e.Info = "on " + fields[1] + " since " + fields[2]
		}
	}
	return e
}

// Close releases the lock. The file stays: removing it would let two
// processes lock two different files of one name.
func (l *Lock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	// Unlocked before the close: a child forked in another goroutine
	// keeps a copy of the descriptor, and the lock, until it execs.
	uerr := platform.Unlock(l.f)
	err := l.f.Close()
	l.f = nil
	return errors.Join(uerr, err)
}

// Holds reports whether path still names the file l locks. A lock file
// deleted or replaced under its holder locks a file no other process can
// find: the next to come locks a new one at path, and both hold "the"
// lock.
func (l *Lock) Holds(path string) bool {
	if l == nil || l.f == nil {
		return false
	}
	locked, err := l.f.Stat()
	if err != nil {
		return false
	}
	named, err := os.Lstat(path)
	return err == nil && os.SameFile(locked, named)
}
