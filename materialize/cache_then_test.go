package materialize

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/internal/flock"
)

// TestOpenCacheThenCallsOnceTheLockIsHeld: OpenCacheThen's function runs
// once, with the cache's lock already held (a sync starts its fetches
// there, and no other sync of the workspace may be reading then), and
// not at all for a cache another holds.
func TestOpenCacheThenCallsOnceTheLockIsHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), ".skills-cache")
	calls := 0
	c, err := OpenCacheThen(ctx, root, 0, CheckRecord, func() func() {
		calls++
		if other, err := OpenCache(ctx, root, 0, CheckRecord); !errors.Is(err, flock.ErrLocked) {
			if other != nil {
				other.Close()
			}
			t.Errorf("a second open while the function ran: %v, want the lock held", err)
		}
		return func() { t.Error("undone, though the cache opened") }
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if calls != 1 {
		t.Fatalf("called %d times, want once", calls)
	}
	if _, err := OpenCacheThen(ctx, root, 0, CheckRecord, func() func() { calls++; return nil }); !errors.Is(err, flock.ErrLocked) || calls != 1 {
		t.Errorf("open of a held cache: %v, called %d times in all", err, calls)
	}
}

// TestOpenCacheThenLetsTheLockGoWhenItsFunctionPanics: a panic in the
// function OpenCacheThen calls (a kind's Open, as the sync starts its
// fetches) lets the cache's lock go as it passes: the daemon recovers
// from a job's panic and goes on, and a lock left to the collector kept
// its every later sync of the workspace waiting.
func TestOpenCacheThenLetsTheLockGoWhenItsFunctionPanics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), ".skills-cache")
	func() {
		defer func() {
			if r := recover(); r != "a kind's Open" {
				t.Fatalf("recovered %v, want the function's panic", r)
			}
		}()
		OpenCacheThen(ctx, root, 0, CheckRecord, func() func() { panic("a kind's Open") })
	}()
	c, err := OpenCache(ctx, root, 0, CheckRecord)
	if err != nil {
		t.Fatalf("open after the panic: %v, want the lock free", err)
	}
	c.Close()
}
