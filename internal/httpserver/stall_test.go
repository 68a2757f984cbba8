package httpserver

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The socket buffers of the tests: small, so that a client that reads
// slowly or not at all blocks the server's writes within a few hundred
// kilobytes, not the megabytes the system may give a socket; not
// smaller than a few of loopback's segments (64 KiB), below which the
// system's window updates, not the client, set the pace (a client
// reading 4 KiB every 5 ms through 4 KiB buffers saw writes wait 1.5 s).
const (
	sendBuffer    = 128 << 10
	receiveBuffer = 256 << 10
)

// smallBuffers is a listener whose connections have a send buffer of
// sendBuffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer)
	}
	return c, err
}

// serveStall is serve with small send buffers.
func serveStall(t *testing.T, h http.Handler, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, sln := New(h, smallBuffers{ln}, l)
	go srv.Serve(sln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// request dials addr with a receive buffer of receiveBuffer and sends a
// GET of path; the caller reads the answer, or does not.
func request(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c := dial(t, addr)
	if err := c.(*net.TCPConn).SetReadBuffer(receiveBuffer); err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	return c
}

// A client that stops reading an answer, a long one or an event stream,
// is let go once a write has waited Stall: the handler's write fails,
// the handler returns and the slot is free for the next client, while
// every other slot is held by a request in progress. Without a bound
// the write waited for good, and so did every client after it.
func TestStalledReaderFreesItsSlot(t *testing.T) {
	t.Parallel()
	const stall = 200 * time.Millisecond
	big := strings.Repeat("x", 1<<20)
	event := "event: message\ndata: " + strings.Repeat("x", 1<<10) + "\n\n"
	for _, tt := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request) error
	}{
		{"a long answer", func(w http.ResponseWriter, _ *http.Request) error {
			for {
				if _, err := io.WriteString(w, big); err != nil {
					return err
				}
			}
		}},
		// As the MCP SDK writes one: events written and flushed from
		// another goroutine while the handler waits for the request's
		// end.
		{"an event stream", func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Content-Type", "text/event-stream")
			failed := make(chan error, 1)
			go func() {
				rc := http.NewResponseController(w)
				for {
					if _, err := io.WriteString(w, event); err != nil {
						failed <- err
						return
					}
					if err := rc.Flush(); err != nil {
						failed <- err
						return
					}
				}
			}()
			<-r.Context().Done() // the server's failed write ends it
			return <-failed
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			held, release := make(chan struct{}, 1), make(chan struct{})
			t.Cleanup(func() { close(release) })
			answering, failed := make(chan struct{}, 1), make(chan error, 1)
			mux := http.NewServeMux()
			mux.HandleFunc("/hold", func(http.ResponseWriter, *http.Request) {
				held <- struct{}{}
				<-release
			})
			mux.HandleFunc("/answer", func(w http.ResponseWriter, r *http.Request) {
				answering <- struct{}{}
				failed <- tt.answer(w, r)
			})
			mux.Handle("/", ok)
			addr := serveStall(t, mux, Limits{Conns: 2, Stall: stall})

			request(t, addr, "/hold")
			await(t, held, "the request that holds a slot")
			request(t, addr, "/answer") // never read
			await(t, answering, "the request never read")
			if code, err := get(addr, "", 10*time.Second); err != nil || code != http.StatusOK {
				t.Fatalf("a new client, one slot held by a request in progress and one by a client that stopped reading: %d %v", code, err)
			}
			select {
			case err := <-failed:
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("the handler's write failed with %v, want the deadline", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the handler still writes to a client that reads nothing")
			}
		})
	}
}

// A client that reads is not cut off however long it keeps the
// connection: not a stream quiet for longer than Stall between events,
// nor a long answer written at once that the client takes a little at
// a time, for longer than Stall in all.
func TestReadAnswerIsNotCut(t *testing.T) {
	t.Parallel()
	// Even a client that keeps pace sees a write wait up to some 150 ms
	// on loopback under load (window updates, delayed acks).
	const stall = 500 * time.Millisecond

	t.Run("a quiet stream", func(t *testing.T) {
		t.Parallel()
		done := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "a\n")
			w.(http.Flusher).Flush() // as a handler that checks for one does
			select {
			case <-r.Context().Done():
				done <- r.Context().Err()
				return
			case <-time.After(4 * stall):
			}
			io.WriteString(w, "b\n")
			done <- http.NewResponseController(w).Flush()
		})
		addr := serveStall(t, h, Limits{Conns: 2, Stall: stall})
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || string(body) != "a\nb\n" {
			t.Errorf("the stream = %q %v, want \"a\\nb\\n\"", body, err)
		}
		if err := <-done; err != nil {
			t.Errorf("the quiet stream was cut: %v", err)
		}
	})

	t.Run("a steady reader", func(t *testing.T) {
		t.Parallel()
		const size = 6 << 20
		done := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, err := io.WriteString(w, strings.Repeat("x", size))
			done <- err
		})
		addr := serveStall(t, h, Limits{Conns: 2, Stall: stall})
		c := request(t, addr, "/")
		start := time.Now()
		resp, err := http.ReadResponse(bufio.NewReaderSize(steady{c}, 64<<10), nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || n != size {
			t.Errorf("read %d bytes of %d: %v", n, size, err)
		}
		if err := <-done; err != nil {
			t.Errorf("the write to a client that reads steadily failed: %v", err)
		}
		if took := time.Since(start); took < 2*stall {
			t.Fatalf("the answer took %v, not longer than the stall of %v: the test shows nothing", took, stall)
		}
	})
}

// steady reads at most 64 KiB at a time, 16 ms apart: some 4 MB/s,
// slow enough that a 6 MiB answer takes 1.5 s at least, fast enough
// that the server's 8 KiB pieces are taken well within the stall.
type steady struct{ io.Reader }

func (s steady) Read(p []byte) (int, error) {
	time.Sleep(16 * time.Millisecond)
	return s.Reader.Read(p[:min(len(p), 64<<10)])
}

// A connection a handler hijacked is its own: its new owner writes to
// it after the handler returned and after Stall, and the write is not
// cut.
func TestHijackedConnectionHasNoStall(t *testing.T) {
	t.Parallel()
	const stall = 100 * time.Millisecond
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		wg.Go(func() {
			defer c.Close()
			time.Sleep(4 * stall)
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"); err != nil {
				t.Errorf("the hijacked connection's write: %v", err)
			}
		})
	})
	addr := serveStall(t, h, Limits{Stall: stall})
	if code, err := get(addr, "", 10*time.Second); err != nil || code != http.StatusOK {
		t.Errorf("the answer on the hijacked connection: %d %v", code, err)
	}
}

// A client that waits for 100 Continue before it sends its body gets it:
// the deadline armed at the handler's start is the server's write of it.
func TestStallAnswersExpectContinue(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		w.Write(body)
	})
	addr := serveStall(t, h, Limits{Stall: 200 * time.Millisecond})
	c := dial(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("before the body: %q %v, want 100 Continue", line, err)
	}
	if _, err := r.ReadString('\n'); err != nil { // the blank line after it
		t.Fatal(err)
	}
	io.WriteString(c, "ok")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("the answer: %d %q %v", resp.StatusCode, body, err)
	}
}
