//go:build unix

package buildtest

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// A program written by WriteProgram runs at once, while other goroutines
// of the process start children all the time: none of them holds it open
// for writing. With os.WriteFile in its place, some runs here failed
// with ETXTBSY.
func TestAProgramWrittenRunsWhileOthersFork(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command("/bin/true").Run()
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	busy := 0
	for i := range 300 {
		path := filepath.Join(dir, fmt.Sprintf("p%03d", i))
		if err := WriteProgram(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := exec.Command(path).Run(); errors.Is(err, syscall.ETXTBSY) {
			busy++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if busy > 0 {
		t.Errorf("%d of 300 programs were busy when run", busy)
	}
}
