package mcp

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/httpserver"
)

// TestMCPHTTPClientThatStopsReadingIsLetGo: a client that asks for a
// long answer (list_skills over 2,000 skills, past what the sockets
// hold) and reads none of it holds its connection only for the server's
// stall: the SDK's write fails, its handler returns, and a new client
// gets the slot while the other is held by a session's open event
// stream. mcp --http serves Handler so, with httpserver.DefaultStall.
//
// Nothing but the stall lets that connection go, so without it the test
// fails at letGo. The bound is not the stall plus a little: before its
// first write, the server computes the long answer (2,000 skills,
// validated against the output schema and encoded twice), which took
// 1.5 to 4.5 s under -race beside the package's other tests on 2 shared
// cores, and once more than the 10 s a client timeout gave it.
func TestMCPHTTPClientThatStopsReadingIsLetGo(t *testing.T) {
	t.Parallel()
	s := newServer(t, catalogWorkspace{bigCatalog(2000)}, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Until its request is in the handler, the connection that will stop
	// reading is one the server closes to make room.
	entered, left := make(chan struct{}, 1), make(chan struct{}, 1)
	h := s.Handler()
	watched := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Stops-Reading") != "" {
			entered <- struct{}{}
			defer func() { left <- struct{}{} }()
		}
		h.ServeHTTP(w, r)
	})
	hs, hln := httpserver.New(watched, smallSendBuffers{ln}, httpserver.Limits{Stall: 300 * time.Millisecond, Conns: 2})
	go hs.Serve(hln)
	t.Cleanup(func() { hs.Close() })
	url := "http://" + ln.Addr().String() + "/"
	// No kept-alive connections: each request's slot is its own. No
	// request has a timeout of its own, which would end the stream and
	// free its slot; each is bounded by letGo.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	ctx, cancel := context.WithTimeout(context.Background(), letGo)
	defer cancel()
	send := func(client *http.Client, method, id, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		return client.Do(req)
	}
	open := func() string {
		t.Helper()
		res, err := send(client, "POST", "", initializeBody)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %s", res.Status)
		}
		return res.Header.Get("Mcp-Session-Id")
	}

	// The session's event stream, read, holds one slot.
	id := open()
	stream, err := send(client, "GET", id, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stream.Body.Close() })
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("the event stream: %s", stream.Status)
	}
	// The client that stops reading holds the other.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.(*net.TCPConn).SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_skills","arguments":{}}}`
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"X-Stops-Reading: 1\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", id, len(call), call)
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the request of the client that stops reading was not served")
	}

	// A new client is answered: the slot of the client that stopped
	// reading was freed.
	open()
	select {
	case <-left:
	case <-ctx.Done():
		t.Fatal("the handler of the client that stopped reading still holds it")
	}
}

// letGo bounds TestMCPHTTPClientThatStopsReadingIsLetGo: long enough for
// a loaded machine to compute the answer, short enough to fail well
// within go test's own timeout.
const letGo = 2 * time.Minute

// smallSendBuffers is a listener whose connections have a send buffer of
// 64 KiB, so that an answer that the client does not read blocks the
// server's write within kilobytes, not the megabytes the system may give
// a socket.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}
