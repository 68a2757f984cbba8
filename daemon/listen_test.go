package daemon

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/httpserver"
)

// TestListenAddressInUse: an address in use is a *ListenError naming it,
// before any job runs.
func TestListenAddressInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Its syncs would return at once (release is closed) and say so on
	// started.
	eng := &stuckEngine{started: make(chan struct{}, 1), release: make(chan struct{})}
	close(eng.release)
	err = Serve(context.Background(), Config{
		Open:   func(context.Context) (Engine, error) { return eng, nil },
		Listen: ln.Addr().String(),
	})
	var le *ListenError
	if !errors.As(err, &le) || le.Addr != ln.Addr().String() || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("Serve on an address in use: %v, want a *ListenError naming %s", err, ln.Addr())
	}
	select {
	case <-eng.started:
		t.Error("a sync ran although the daemon could not serve")
	default:
	}
}

// heldEngine is stuckEngine with a workspace's state and lock files.
type heldEngine struct {
	stuckEngine
	dir string
}

func (e *heldEngine) Settings() Settings {
	st := e.stuckEngine.Settings()
	st.StateFile, st.LockFile = filepath.Join(e.dir, ".daemon.json"), filepath.Join(e.dir, ".daemon.lock")
	return st
}

// TestListenInUseKeepsTheState: a daemon that cannot serve its address
// ends leaving the state file as the last daemon wrote it: status still
// shows when that one synced each source. Held before it bound, it wrote
// a fresh state over it, every source never synced.
func TestListenInUseKeepsTheState(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	eng := &heldEngine{stuckEngine{started: make(chan struct{}, 1), release: make(chan struct{})}, t.TempDir()}
	close(eng.release)
	last := []byte(`{"pid":1,"sources":{"team":{"revision":"abc","last_success":"2026-12-01T12:00:00Z"}}}` + "\n")
	stateFile := eng.Settings().StateFile
	if err := os.WriteFile(stateFile, last, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Serve(context.Background(), Config{
		Open:   func(context.Context) (Engine, error) { return eng, nil },
		Listen: ln.Addr().String(),
	})
	if le := (*ListenError)(nil); !errors.As(err, &le) {
		t.Fatalf("Serve on an address in use: %v", err)
	}
	if got, err := os.ReadFile(stateFile); err != nil || !bytes.Equal(got, last) {
		t.Errorf("the state file after a daemon that could not serve: %v\n%s", err, got)
	}
}

// TestListenAddr: a port alone is loopback; another host is kept.
func TestListenAddr(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		loopback bool
	}{{":9464", "127.0.0.1:9464", true}, {"9464", "127.0.0.1:9464", true}, {"127.0.0.1:9464", "127.0.0.1:9464", true},
		{"localhost:1", "localhost:1", true}, {"0.0.0.0:9464", "0.0.0.0:9464", false}, {"[::1]:9464", "[::1]:9464", true}} {
		got, lb, err := ListenAddr(tt.in)
		if err != nil || got != tt.want || lb != tt.loopback {
			t.Errorf("ListenAddr(%q) = %q, %v, %v; want %q, %v", tt.in, got, lb, err, tt.want, tt.loopback)
		}
	}
	if _, _, err := ListenAddr("a:b:c"); err == nil {
		t.Error("ListenAddr(a:b:c) did not fail")
	}
}

// TestHealthzAnswersWithEverySlotHeld: idle kept-alive connections and
// ones that never send a byte, more than the server holds, do not keep
// a liveness probe from its answer.
func TestHealthzAnswersWithEverySlotHeld(t *testing.T) {
	t.Parallel()
	eng := &stuckEngine{started: make(chan struct{}, 1), release: make(chan struct{})}
	close(eng.release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Config{Open: func(context.Context) (Engine, error) { return eng, nil }, Listen: "127.0.0.1:0",
			Serving: func(a string) { addr <- a }})
	}()
	base := <-addr
	conns := httpserver.Pages().Conns
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	// 5 s each: well within the header and idle timeouts (10 s, 1 min),
	// which would free a slot without the server's making room.
	for i := range conns + 16 {
		c, err := net.Dial("tcp", base)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		if i >= conns+8 {
			continue // never sends a byte
		}
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+base+"\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d, the server holding %d: %v", i+1, conns, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := probe.Get("http://" + base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz with %d connections held: %v", len(held), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz with %d connections held: %d", len(held), resp.StatusCode)
	}
	// Shutdown waits up to 5 s for a connection that never sent a byte.
	for _, c := range held {
		c.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
