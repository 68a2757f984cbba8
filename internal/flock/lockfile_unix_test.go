//go:build unix

package flock

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
)

// A lock whose descriptor has a copy elsewhere (a child forked by another
// goroutine, before its exec closes it) is free once Close returns: the
// copy shares the open file, and with it the flock, so only an explicit
// unlock releases it.
func TestCloseReleasesACopiedDescriptor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), ".lock")
	l, err := Acquire(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := syscall.Dup(int(l.f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(copied)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(ctx, path, 0)
	if err != nil {
		t.Fatalf("lock again after Close, with a copy of the old descriptor open: %v", err)
	}
	again.Close()
}
