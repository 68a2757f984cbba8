//go:build unix

package rawfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "setting")
	if err := os.WriteFile(path, []byte("always [madvise] never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		size       int
		want       string
	}{
		{"whole", path, 128, "always [madvise] never\n"},
		{"cut to the buffer", path, 6, "always"},
		{"missing", filepath.Join(dir, "missing"), 128, ""},
		{"a folder", dir, 128, ""},
		{"empty", os.DevNull, 128, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Read(tt.path, make([]byte, tt.size)); got != tt.want {
				t.Errorf("Read(%s) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// TestReadToTheEnd: a file that comes in more than one read (as
// /proc/self/maps comes a page a read) is read to its end, here a FIFO
// written in two parts.
func TestReadToTheEnd(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.WriteString("first part, ")
		time.Sleep(50 * time.Millisecond)
		f.WriteString("second part")
	}()
	if got := Read(fifo, make([]byte, 128)); got != "first part, second part" {
		t.Errorf("Read = %q, want both parts", got)
	}
}
