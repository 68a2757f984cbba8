//go:build unix

package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/mcptest"
	"github.com/skillsync/skillsync/internal/skilltest"
	wsfiles "github.com/skillsync/skillsync/workspace"
)

// stoppingMCP is a skillsync mcp --http process sent SIGTERM (twice at
// once) while the use of pdf it answered waits for the usage file, which
// held holds: the process says so and waits. exited is closed once it is gone, with
// waitErr its end.
type stoppingMCP struct {
	ws      string
	held    io.Closer
	stderr  *skilltest.Buffer
	process *os.Process
	stopped time.Time // when the first SIGTERM was sent
	exited  chan struct{}
	waitErr error
}

func startStoppingMCP(t *testing.T) *stoppingMCP {
	t.Helper()
	ws := workspace(t)
	held, err := flock.Acquire(context.Background(), filepath.Join(ws, "skills", wsfiles.UsageName+".lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	cmd, stderr := mcpCommand(t, ws, "--http", "127.0.0.1:0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &stoppingMCP{ws: ws, held: held, stderr: stderr, process: cmd.Process, exited: make(chan struct{})}
	go func() {
		m.waitErr = cmd.Wait()
		close(m.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-m.exited
	})
	var endpoint string
	eventually(t, "where skillsync mcp --http serves", func() bool {
		found := servingLine.FindStringSubmatch(stderr.String())
		if found != nil {
			endpoint = found[1]
		}
		return found != nil
	})

	cs := connectHTTP(t, endpoint)
	var pdf mcpSkill
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf"}, &pdf)
	if pdf.Body == "" || pdf.AlreadyLoaded {
		t.Fatalf("load_skill pdf = %+v", pdf)
	}
	cs.Close()
	// Twice at once, as GNU timeout stops a command (the process, then
	// its group): one stop, which the process still winds down from.
	for range 2 {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	m.stopped = time.Now()
	// The server says what it waits for; the lock is let go once it
	// does, so that a server that does not wait has exited by then.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stderr.String(), "still being recorded"); time.Sleep(20 * time.Millisecond) {
		select {
		case <-m.exited:
			held.Close()
			uses, _ := usageCounts(t, ws, "pdf")
			t.Fatalf("skillsync mcp --http exited (%v) while the use of pdf waited for the usage file: %d uses recorded, want 1\n%s", m.waitErr, uses, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("skillsync mcp --http neither exited nor said it waits for the use of pdf:\n%s", stderr)
		}
	}
	return m
}

// TestMCPOverHTTPRecordsTheUseInFlightWhenStopped: a use answered while
// another writer held the usage file, and still waiting for it when mcp
// --http gets SIGTERM, is in the usage file once the process has exited
// 0. Before, the process exited as soon as its HTTP server had shut down,
// and the use was lost.
func TestMCPOverHTTPRecordsTheUseInFlightWhenStopped(t *testing.T) {
	t.Parallel()
	m := startStoppingMCP(t)
	// Another signal within the second after the first is the same stop
	// (a wrapper that forwards it, a hasty Ctrl-C): the wait goes on.
	if time.Since(m.stopped) < secondSignalAfter*8/10 {
		if err := m.process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-m.exited:
			t.Fatalf("skillsync mcp --http ended (%v) on a SIGTERM within a second of the first, its use of pdf still waiting:\n%s", m.waitErr, m.stderr)
		case <-time.After(300 * time.Millisecond):
		}
	} else {
		t.Logf("the server said it waits only %v after the first SIGTERM: a third is not sent", time.Since(m.stopped))
	}
	m.held.Close()
	select {
	case <-m.exited:
		if m.waitErr != nil {
			t.Fatalf("skillsync mcp --http did not exit 0 on SIGTERM: %v\n%s", m.waitErr, m.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("skillsync mcp --http did not exit once the usage file was free:\n%s", m.stderr)
	}
	if uses, _ := usageCounts(t, m.ws, "pdf"); uses != 1 {
		t.Errorf("pdf: %d uses after skillsync mcp --http stopped, want 1\n%s", uses, m.stderr)
	}
}

// TestSecondSignalStopsAtOnce: a second SIGTERM (or Ctrl-C) while a
// command winds down after the first, a second or more later, ends the
// process there and then, as the user asked twice; before, the first signal's handler swallowed
// it, and mcp waited up to a minute for a usage file another writer
// held, with only SIGKILL to stop it. Every write skillsync makes
// survives a kill (atomic renames), so nothing is left half-written.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	m := startStoppingMCP(t)
	time.Sleep(time.Until(m.stopped.Add(secondSignalAfter + 500*time.Millisecond)))
	if err := m.process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.exited:
		var exit *exec.ExitError
		if !errors.As(m.waitErr, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("skillsync mcp --http ended by %v on a second SIGTERM, want killed by SIGTERM", m.waitErr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("skillsync mcp --http still waits after a second SIGTERM:\n%s", m.stderr)
	}
}
