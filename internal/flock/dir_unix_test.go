//go:build unix

package flock

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAcquireDirOpensOnlyAFolder: a FIFO or a link where the folder was
// is refused at once; a FIFO opened to be read would wait for a writer,
// and the sync with it.
func TestAcquireDirOpensOnlyAFolder(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	fifo := filepath.Join(base, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{fifo, link} {
		done := make(chan error, 1)
		go func() {
			l, err := AcquireDir(context.Background(), dir, ".lock", time.Second)
			if err == nil {
				l.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: locked", dir)
			}
		case <-time.After(10 * time.Second):
			w, _ := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if w != nil {
				w.Close()
			}
			<-done
			t.Errorf("%s: the open waited", dir)
		}
	}
	l, err := AcquireDir(context.Background(), real, ".lock", time.Second)
	if err != nil {
		t.Fatalf("a folder: %v", err)
	}
	l.Close()
}
