package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestProcessMapsItsTextAhead: a skillsync process has its whole text
// mapped a moment after it starts (internal/platform/starttext), where it
// has two Ps and the kernel MADV_POPULATE_READ; without it, the pages the
// start did not touch stay unmapped (11,872 of 12,064 KiB here after 10 s).
// Here the process is a sync waiting on a remote that never answers.
func TestProcessMapsItsTextAhead(t *testing.T) {
	t.Parallel()
	silent := gittest.StartSilent(t)
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: http://"+silent.Addr+"/team.git\n")
	bin := binary(t)
	cmd := exec.Command(bin, "sync")
	cmd.Dir, cmd.Env = ws, environ(t, []string{"GOMAXPROCS=2"})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var size, rss int
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if size, rss, err = textMapped(cmd.Process.Pid, bin); err != nil {
			t.Fatal(err)
		}
		if size > 0 && rss == size {
			return
		}
	}
	if !populateRead() {
		t.Skip("this kernel has no MADV_POPULATE_READ")
	}
	t.Errorf("the text of %s: %d KiB of %d KiB mapped, want all", bin, rss, size)
}

// textMapped returns the Size and Rss, in KiB, of the executable mapping
// of path in process pid.
func textMapped(pid int, path string) (size, rss int, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, 0, err
	}
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && len(fields) >= 5 {
			// The line that opens a mapping.
			in = fields[1] == "r-xp" && len(fields) >= 6 && fields[5] == abs
			continue
		}
		if in && len(fields) == 3 && fields[2] == "kB" {
			v, _ := strconv.Atoi(fields[1])
			switch fields[0] {
			case "Size:":
				size = v
			case "Rss:":
				rss = v
			}
		}
	}
	return size, rss, s.Err()
}

// populateRead reports whether the kernel is 5.14 or later, the first
// with MADV_POPULATE_READ.
func populateRead() bool {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(string(data), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 5 || major == 5 && minor >= 14
}
