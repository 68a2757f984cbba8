package flock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

func TestExclusiveAndShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), ".lock")
	first, err := Acquire(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(ctx, path, 50*time.Millisecond)
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrLocked) || held.PID != os.Getpid() {
		t.Fatalf("second Acquire = %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	if _, err := AcquireShared(ctx, path, 0); !errors.Is(err, ErrLocked) {
		t.Fatalf("shared lock beside an exclusive one: %v", err)
	}
	first.Close()
	r1, err := AcquireShared(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := AcquireShared(ctx, path, 0)
	if err != nil {
		t.Fatalf("two shared locks: %v", err)
	}
	r1.Close()
	r2.Close()
}

func TestWaitEndsWhenReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), ".lock")
	first, err := Acquire(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		first.Close()
	}()
	second, err := Acquire(ctx, path, time.Minute)
	if err != nil {
		t.Fatalf("waiting Acquire: %v", err)
	}
	second.Close()
}

func TestWaitHonoursContext(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".lock")
	first, err := Acquire(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Acquire(ctx, path, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait = %v", err)
	}
}

func TestPlantedLinkIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(t.TempDir(), "made-through-link")
	for target, link := range map[string]string{outside: ".lock", dangling: ".dangling.lock"} {
		path := filepath.Join(dir, link)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		l, err := Acquire(context.Background(), path, 0)
		if err == nil {
			l.Close()
		}
		if !errors.Is(err, atomicfile.ErrSymlink) || !strings.Contains(err.Error(), path) {
			t.Errorf("Acquire through a link = %v, want a refusal naming %s", err, path)
		}
	}
	if data, _ := os.ReadFile(outside); string(data) != "precious" {
		t.Errorf("the file behind the link became %q", data)
	}
	if _, err := os.Lstat(dangling); !errors.Is(err, os.ErrNotExist) {
		t.Error("a file was created through a dangling link")
	}
}

// The holder's record replaces a longer one left by an earlier holder
// whole: nothing of the old one is left past its end.
func TestTheRecordReplacesALongerOne(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".lock")
	old := "4194304 a-host-name-much-longer-than-this-machines-own.example.org 2020-01-01T00:00:00Z\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], strconv.Itoa(os.Getpid())+" ") || len(strings.Fields(lines[0])) != 3 {
		t.Errorf("the lock file holds %q, want one record of this process", data)
	}
}

// A lock file that is a hard link to another file (planted in its place)
// still locks, but the holder's record is neither written into it nor
// read from it: that other file keeps its content, and a waiter is not
// told a holder from it.
func TestAHardLinkedLockFileGetsNoRecord(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the link count is not told here")
	}
	t.Parallel()
	const content = "4194304 elsewhere 2020-01-01T00:00:00Z and more than a record\n"
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ".lock")
	if err := os.Link(outside, path); err != nil {
		t.Skip(err) // another file system for the temp folders
	}
	l, err := Acquire(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(context.Background(), path, 0)
	var held *HeldError
	if !errors.As(err, &held) || held.PID != 0 {
		t.Errorf("a second Acquire = %v, want a HeldError naming no process", err)
	}
	l.Close()
	if data, _ := os.ReadFile(outside); string(data) != content {
		t.Errorf("the file linked as the lock now holds %q", data)
	}
}
