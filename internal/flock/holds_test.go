package flock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A lock holds its path while the file there is the one it locked: not
// once the file is removed, nor once another takes its name.
func TestHolds(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.Holds(path) {
		t.Fatal("a lock just taken does not hold its path")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if l.Holds(path) {
		t.Error("holds a path whose file was removed")
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if l.Holds(path) {
		t.Error("holds a path another file took")
	}
	var none *Lock
	if none.Holds(path) {
		t.Error("a nil lock holds a path")
	}
}
