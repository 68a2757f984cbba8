package main

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestHookInputThatNeverEnds: an agent that keeps the hook's stdin open
// does not hold it: reading gives up when its context ends.
func TestHookInputThatNeverEnds(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := readHook(ctx, r)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("readHook of an input that never ends returned no error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("readHook blocked past its context")
	}
}
