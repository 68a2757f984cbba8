package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/internal/hostenv"
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
		_, err := readHook(ctx, r, func(r io.Reader) (agent.Event, error) { return claude.ReadHook(hostenv.Env{}, r) })
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
