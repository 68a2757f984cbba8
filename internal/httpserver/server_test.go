package httpserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve runs h on a new loopback port with the limits l and returns its
// address.
func serve(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(h, l)
	go srv.Serve(Listener(ln, l.Conns))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func get(addr, host string, timeout time.Duration) (int, error) {
	req, err := http.NewRequest("GET", "http://"+addr+"/", nil)
	if err != nil {
		return 0, err
	}
	if host != "" {
		req.Host = host
	}
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })

// Connections past the cap wait until one of those held closes.
func TestListenerHoldsAtMostConns(t *testing.T) {
	t.Parallel()
	addr := serve(t, ok, Limits{Conns: 2})
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	if code, err := get(addr, "", 300*time.Millisecond); err == nil {
		t.Fatalf("a third connection was served (%d) while two were held", code)
	}
	held[0].Close()
	if code, err := get(addr, "", 5*time.Second); err != nil || code != http.StatusOK {
		t.Fatalf("after one closed: %d %v", code, err)
	}
}

// A kept-alive connection that sends nothing more is closed after Idle.
func TestIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	addr := serve(t, ok, Limits{Idle: 200 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("the idle connection was not closed: %v", err)
	}
}

// A client that stops reading is let go after Write: the handler's
// writes fail, and what it holds is freed.
func TestStalledReaderIsLetGo(t *testing.T) {
	t.Parallel()
	failed := make(chan error, 1)
	big := strings.Repeat("x", 1<<20)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for {
			if _, err := io.WriteString(w, big); err != nil {
				failed <- err
				return
			}
		}
	})
	addr := serve(t, h, Limits{Write: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	select {
	case <-failed:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still writes to a client that reads nothing")
	}
}

// A request that reached a loopback address under a name that is not
// loopback (DNS rebinding) is refused; loopback names pass.
func TestGuardLoopback(t *testing.T) {
	t.Parallel()
	addr := serve(t, GuardLoopback(ok), Limits{})
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{
		"":                         http.StatusOK,
		"localhost:" + port:        http.StatusOK,
		"LOCALHOST":                http.StatusOK,
		"[::1]:" + port:            http.StatusOK,
		"rebind.example:" + port:   http.StatusForbidden,
		"rebind.example":           http.StatusForbidden,
		"127.0.0.1.nip.io:" + port: http.StatusForbidden,
	} {
		if code, err := get(addr, host, 5*time.Second); err != nil || code != want {
			t.Errorf("Host %q: %d %v, want %d", host, code, err, want)
		}
	}
	// Without the server's local address (a handler called directly) the
	// request did not come in on loopback.
	if ViaLoopback((&http.Request{}).WithContext(context.Background())) {
		t.Error("a request with no local address counted as loopback")
	}
}

// A server shut down while every slot is held ends at once: Accept waits
// for a slot or for the listener to close, whichever comes first.
func TestServeEndsWithEverySlotHeld(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(ok, Limits{Conns: 1})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(Listener(ln, 1)) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(100 * time.Millisecond) // the one slot taken
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	srv.Shutdown(ctx) // it waits for Serve's Accept to return
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Shutdown took %v: Serve waited for a slot", took)
	}
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second): // the held connection's header timeout is 10 s
		t.Fatal("Serve still waits for a slot after Shutdown")
	}
}
