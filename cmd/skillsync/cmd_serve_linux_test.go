package main

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO in a workspace skill is refused (403), not a failure of the
// page (500), and nothing waits on it.
func TestServeRefusesAFIFO(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	dir := filepath.Join(ws, "skills", "probe")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: probe\ndescription: A probe.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, ws, serveLine, "serve", "--listen", "127.0.0.1:0")
	for p, want := range map[string]int{"/skills/probe": http.StatusOK, "/skills/probe/files/fifo": http.StatusForbidden} {
		res, err := http.Get(addr + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", p, res.StatusCode, want)
		}
	}
}
