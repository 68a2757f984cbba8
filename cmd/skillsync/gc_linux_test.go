package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A command that stays up gives up the huge-page advice startheap's
// initialiser gave its heap, before it serves: its VmFlags show the
// withdrawal (nh) and no advice (hg) left. A short command keeps it (its
// own process is gone before it could be read; startheap's tests read
// their own).
func TestLongRunningCommandUndoesTheStartHeap(t *testing.T) {
	t.Parallel()
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(enabled), "[madvise]") {
		t.Skip("huge pages are not given on advice here: startheap gives none")
	}
	cmd, stderr := command(t, t.TempDir(), "mcp")
	stdin, err := cmd.StdinPipe() // held open: the server waits on it
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	smaps := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/smaps"
	var flags []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		data, err := os.ReadFile(smaps)
		if err != nil {
			t.Fatalf("%v (stderr: %s)", err, stderr)
		}
		flags = vmFlags(string(data))
		if hasFlag(flags, "nh") && !hasFlag(flags, "hg") {
			return
		}
	}
	t.Errorf("skillsync mcp still has a mapping advised for huge pages (hg) or none withdrawn (nh): %q", flags)
}

// vmFlags returns the VmFlags line of each mapping in smaps.
func vmFlags(smaps string) []string {
	var out []string
	for line := range strings.Lines(smaps) {
		if f, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			out = append(out, strings.TrimSpace(f))
		}
	}
	return out
}

func hasFlag(flags []string, flag string) bool {
	for _, f := range flags {
		if strings.Contains(" "+f+" ", " "+flag+" ") {
			return true
		}
	}
	return false
}
