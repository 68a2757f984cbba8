package httpserver

import (
	"bufio"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// DefaultStall is Limits.Stall for a server whose answers stream: a
// client that takes nothing of a write for 30 seconds has stopped
// reading, not fallen behind.
const DefaultStall = 30 * time.Second

// stallChunk is the most one write to the connection carries under one
// deadline. A long answer written at once is cut into pieces so that
// the deadline measures progress, not the time the whole answer takes:
// a client is let go only if it takes less than 8 KiB in Stall.
const stallChunk = 8 << 10

// stallDeadline gives each write of h's answers d to be taken by the
// client, the deadline set anew before every write and flush. A write
// deadline set once (http.Server.WriteTimeout) would cut an event stream
// that is read, however steadily; with none, a client that stopped
// reading blocked the write, and so held its handler, its connection and
// a slot of Limits.Conns, for good. Between writes the deadline may pass
// unseen: a quiet stream writes nothing it could cut.
//
// The server's own writes are bounded too: its 100 Continue, from the
// handler's start (a handler that reads the body of a client waiting for
// it more than d after it starts finds the connection broken), and the
// end of the answer, from the handler's return. A hijacked connection is
// its new owner's and gets no deadline.
func stallDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}
		sw.arm()
		h.ServeHTTP(sw, r)
		sw.arm()
	})
}

// stallWriter is a ResponseWriter that renews the connection's write
// deadline before each write. It has Flush and Unwrap, so that
// http.ResponseController and a check for http.Flusher (the MCP SDK's
// event stream flushes each event) still reach the server's writer; it
// has no ReadFrom, so io.Copy's writes come through Write too.
type stallWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	d        time.Duration
	hijacked atomic.Bool
}

// arm gives the next write d from now. Its error is that of a hijacked
// connection or one without deadlines, where there is nothing to bound.
func (w *stallWriter) arm() {
	if !w.hijacked.Load() {
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	}
}

func (w *stallWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return w.ResponseWriter.Write(p)
	}
	n := 0
	for len(p) > 0 {
		w.arm()
		m, err := w.ResponseWriter.Write(p[:min(len(p), stallChunk)])
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// FlushError is what http.ResponseController.Flush calls, so that a
// flush that failed says so.
func (w *stallWriter) FlushError() error {
	w.arm()
	return w.rc.Flush()
}

func (w *stallWriter) Flush() { _ = w.FlushError() }

// Hijack is here, not left to Unwrap, so that the deadline is not set
// on a connection the handler took over.
func (w *stallWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := w.rc.Hijack()
	if err == nil {
		w.hijacked.Store(true)
	}
	return c, rw, err
}

func (w *stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var (
	_ http.Flusher  = (*stallWriter)(nil)
	_ http.Hijacker = (*stallWriter)(nil)
)
