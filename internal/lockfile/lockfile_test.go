package lockfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestExclusiveAndShared(t *testing.T) {
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
