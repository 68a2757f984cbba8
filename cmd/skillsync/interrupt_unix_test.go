//go:build unix

package main

import (
	"bytes"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestInterruptedSyncSaysSoOnce: Ctrl-C while a sync waits on its source
// ends it at once with one line saying it was interrupted and that
// running it again finishes the work, and exit 1.
func TestInterruptedSyncSaysSoOnce(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: http://"+ln.Addr().String()+"/team.git\n")
	cmd := exec.Command(binary(t), "sync")
	cmd.Dir, cmd.Env = ws, environ(t, nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the sync never reached its source")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the sync did not end after SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want 1", err)
	}
	out := stderr.String()
	if strings.Count(out, "interrupted") != 1 || !strings.Contains(out, "running the command again finishes it") || strings.Count(out, "context canceled") > 1 {
		t.Errorf("stderr after SIGINT:\n%s", out)
	}
}
