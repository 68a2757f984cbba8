//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/mcptest"
	wsfiles "github.com/skillsync/skillsync/workspace"
)

// TestMCPOverHTTPRecordsTheUseInFlightWhenStopped: a use answered while
// another writer held the usage file, and still waiting for it when mcp
// --http gets SIGTERM, is in the usage file once the process has exited
// 0. Before, the process exited as soon as its HTTP server had shut down,
// and the use was lost.
func TestMCPOverHTTPRecordsTheUseInFlightWhenStopped(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	held, err := flock.Acquire(context.Background(), filepath.Join(ws, "skills", wsfiles.UsageName+".lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cmd, stderr := mcpCommand(t, ws, "--http", "127.0.0.1:0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// exited is closed once the process is gone, with waitErr its end.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	var endpoint string
	eventually(t, "where skillsync mcp --http serves", func() bool {
		m := servingLine.FindStringSubmatch(stderr.String())
		if m != nil {
			endpoint = m[1]
		}
		return m != nil
	})

	cs := connectHTTP(t, endpoint)
	var pdf mcpSkill
	mcptest.Call(t, cs, "load_skill", map[string]any{"name": "pdf"}, &pdf)
	if pdf.Body == "" || pdf.AlreadyLoaded {
		t.Fatalf("load_skill pdf = %+v", pdf)
	}
	cs.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The server says what it waits for; the lock is let go once it
	// does, so that a server that does not wait has exited by then.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stderr.String(), "still being recorded"); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			held.Close()
			uses, _ := usageCounts(t, ws, "pdf")
			t.Fatalf("skillsync mcp --http exited (%v) while the use of pdf waited for the usage file: %d uses recorded, want 1\n%s", waitErr, uses, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("skillsync mcp --http neither exited nor said it waits for the use of pdf:\n%s", stderr)
		}
	}
	held.Close()
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("skillsync mcp --http did not exit 0 on SIGTERM: %v\n%s", waitErr, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("skillsync mcp --http did not exit once the usage file was free:\n%s", stderr)
	}
	if uses, _ := usageCounts(t, ws, "pdf"); uses != 1 {
		t.Errorf("pdf: %d uses after skillsync mcp --http stopped, want 1\n%s", uses, stderr)
	}
}
