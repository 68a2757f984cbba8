package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var serveLine = regexp.MustCompile(`skillsync serve: (http://127\.0\.0\.1:\d+)/`)

// startServe runs skillsync serve on a free loopback port in dir and
// returns its address; SIGTERM stops it at the end of the test, with exit 0.
func startServe(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(binary(t), "serve", "--listen", "127.0.0.1:0")
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "PATH=" + os.Getenv("PATH")}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var addr string
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if m := serveLine.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("skillsync serve did not say where it serves:\n%s", strings.Join(seen, "\n"))
	}
	go io.Copy(io.Discard, stderr)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("skillsync serve did not exit 0 on SIGTERM: %v", err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Error("skillsync serve did not stop on SIGTERM")
		}
	})
	return addr
}

// TestServe runs the web catalog over a synced workspace: the catalog,
// a skill page, the sources, and no route that writes.
func TestServe(t *testing.T) {
	ws := workspace(t)
	if r := run(t, ws, "sync"); r.code != 0 && r.code != 3 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	if r := run(t, ws, "use", "release-notes"); r.code != 0 {
		t.Fatalf("use: %d\n%s", r.code, r.stderr)
	}
	addr := startServe(t, ws)
	get := func(p string) (int, string) {
		t.Helper()
		res, err := http.Get(addr + p)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	for p, want := range map[string][]string{
		"/":                     {">release-notes</a>", ">skillsync</a>"},
		"/skills/release-notes": {"<h1>release-notes</h1>", `<svg class="chart"`, "1 uses and 0 views in all"},
		"/sources":              {"builtin"},
		"/curation":             {"Curation"},
		"/drafts":               {"No draft waits."},
		"/skills/nope":          nil,
	} {
		code, body := get(p)
		if want == nil {
			if code != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", p, code)
			}
			continue
		}
		if code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p, code, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q", p, w)
			}
		}
	}
	res, err := http.Post(addr+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", res.StatusCode)
	}
}

func TestServeNeedsATokenOffLoopback(t *testing.T) {
	r := run(t, t.TempDir(), "serve", "--listen", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.stderr, "SKILLSYNC_SERVE_TOKEN") {
		t.Errorf("serve on 0.0.0.0 without a token: exit %d\n%s", r.code, r.stderr)
	}
}
