package httpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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
	srv, ln := New(h, ln, l)
	go srv.Serve(ln)
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

// A server shut down while every slot is held by a request in flight
// and a client waits for one ends at once: Accept waits for a slot or for
// the listener to close, whichever comes first.
func TestServeEndsWithEverySlotHeld(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		entered <- struct{}{}
		<-release
	})
	srv, ln := New(h, ln, Limits{Conns: 1})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	busy := dial(t, ln.Addr().String())
	io.WriteString(busy, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	await(t, entered, "the request in flight")
	dial(t, ln.Addr().String()) // waits in Accept for the one slot
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	shut := make(chan struct{})
	go func() {
		srv.Shutdown(ctx) // it waits for Serve's Accept to return
		close(shut)
	}()
	select {
	case <-shut:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown still waits: Serve waits for a slot")
	}
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still waits for a slot after Shutdown")
	}
}

// dial connects to addr, closing the connection when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// await fails the test if ch gives nothing within 10 s.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not served", what)
	}
}

// A full server still answers a new client when what holds its
// slots is connections without a request in progress: each is let go to
// make room, the one that waited longest first.
func TestFullServerAnswers(t *testing.T) {
	t.Parallel()
	const n = 4
	for _, tt := range []struct {
		name string
		hold func(t *testing.T, c net.Conn) // leaves c holding a slot
	}{
		{"idle kept-alive connections", func(t *testing.T, c net.Conn) {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("a client past the cap: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}},
		{"connections that never sent a byte", func(*testing.T, net.Conn) {}},
		// A slowloris: the headers never end, so its request never
		// starts.
		{"connections that trickle their headers", func(_ *testing.T, c net.Conn) {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := serve(t, ok, Limits{Conns: n})
			for range n + 2 { // past the cap: those held are let go too
				tt.hold(t, dial(t, addr))
			}
			// Half the header timeout, which would free the slots
			// of all but the idle.
			if code, err := get(addr, "", 5*time.Second); err != nil || code != http.StatusOK {
				t.Fatalf("a new client of a server full of %s: %d %v", tt.name, code, err)
			}
		})
	}
}

// When every slot holds a request in progress (in a handler, or a
// connection a handler hijacked), a new client waits until one ends, and
// then is served: never more than n at once.
func TestFullServerWaitsForARequestToEnd(t *testing.T) {
	t.Parallel()
	const n = 4
	for _, hijack := range []bool{false, true} {
		name := map[bool]string{false: "requests in flight", true: "hijacked connections"}[hijack]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var cur, most atomic.Int32
			entered, release := make(chan struct{}, 2*n), make(chan struct{}, 2*n)
			var once sync.Once
			releaseAll := func() { once.Do(func() { close(release) }) }
			t.Cleanup(releaseAll)
			h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				in := cur.Add(1)
				for m := most.Load(); in > m && !most.CompareAndSwap(m, in); m = most.Load() {
				}
				entered <- struct{}{}
				if !hijack {
					<-release
					cur.Add(-1) // before the slot frees
					io.WriteString(w, "ok")
					return
				}
				c, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					cur.Add(-1)
					return
				}
				go func() {
					<-release
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
					cur.Add(-1)
					c.Close()
				}()
			})
			addr := serve(t, h, Limits{Conns: n})
			var held []net.Conn
			for range n {
				c := dial(t, addr)
				io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
				held = append(held, c)
				await(t, entered, "a request within the cap")
			}
			got := make(chan error, 1)
			go func() {
				code, err := get(addr, "", 20*time.Second)
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("status %d", code)
				}
				got <- err
			}()
			select {
			case <-entered:
				t.Fatalf("a request past the cap of %d was served while every slot held one in progress", n)
			case <-time.After(300 * time.Millisecond):
			}
			release <- struct{}{}
			await(t, entered, "the waiting client, once a request ended,")
			releaseAll()
			if err := <-got; err != nil {
				t.Fatalf("the waiting client: %v", err)
			}
			// None of those in progress was cut short for it.
			for i, c := range held {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatalf("held connection %d: %v", i, err)
				}
				resp.Body.Close()
			}
			if m := most.Load(); m > n {
				t.Errorf("%d requests in progress at once, past the cap of %d", m, n)
			}
		})
	}
}
