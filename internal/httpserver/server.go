// Package httpserver is what skillsync's HTTP servers (the daemon's
// metrics and health, serve's catalog, mcp --http) share: the limits that
// keep a client from holding the process's memory or descriptors, and the
// check that a request reaching a loopback address names a loopback host.
package httpserver

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits are how long a request may take and how many connections are
// held at once. A zero Write leaves responses unbounded in time, for
// streams that stay open (MCP's event streams); such a server sets Stall
// instead, which bounds each write and not the whole answer, so that a
// client that stopped reading a stream is let go and one that reads it
// is not (zero: writes are not bounded). A server answering with pages
// keeps Write, a bound on the whole answer: with both set, Stall's
// deadlines replace Write's.
type Limits struct {
	Read, Write, Idle, Stall time.Duration
	Conns                    int
}

// Pages returns the limits of a server that answers with one page or
// document per request: a client that stops reading is let go after a
// minute, as is an idle kept-alive connection.
func Pages() Limits {
	return Limits{Read: 30 * time.Second, Write: time.Minute, Idle: time.Minute, Conns: 64}
}

// New returns a server for h with the limits l, and ln wrapped to hold at
// most l.Conns connections (any number when l.Conns <= 0); the server is
// meant to serve the listener New returns.
//
// Without the cap every idle or slow client holds a descriptor, and
// enough of them stop the daemon's syncs. But a cap that only waits for a
// connection to close lets 64 idle kept-alive connections, or 64 that
// never send a byte, keep /healthz from answering for up to a minute, and
// a liveness probe restarts the pod. So when every slot is held and a
// client connects, the connection that has waited longest without a
// request in progress is closed to make room; the new one waits (in the
// process, one at a time; the rest in the system's queue) only while
// every held connection has a request in progress.
func New(h http.Handler, ln net.Listener, l Limits) (*http.Server, net.Listener) {
	if l.Stall > 0 {
		h = stallDeadline(h, l.Stall)
	}
	srv := &http.Server{
		Handler: h,
		// Not shortened for the cap's sake: a client that trickles its
		// headers can be let go like an idle one (see limiter.track).
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       l.Read,
		WriteTimeout:      l.Write,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    64 << 10,
	}
	if l.Conns <= 0 {
		return srv, ln
	}
	lim := &limiter{
		Listener: ln,
		n:        l.Conns,
		held:     make(map[*heldConn]struct{}, l.Conns),
		wake:     make(chan struct{}),
		closed:   make(chan struct{}),
	}
	srv.ConnState = lim.track
	return srv, lim
}

// limiter is a listener that holds at most n connections, closing one
// without a request in progress to make room for a new one.
type limiter struct {
	net.Listener
	n      int
	closed chan struct{}
	once   sync.Once

	mu   sync.Mutex
	held map[*heldConn]struct{}
	// tick orders the connections by when they last became free to let
	// go: the lowest is the one that has waited longest.
	tick uint64
	// wake is closed (and replaced) when a slot frees or a held
	// connection becomes free to let go.
	wake chan struct{}
}

// heldConn is a connection that holds a slot until it is closed.
type heldConn struct {
	net.Conn
	l *limiter
	// Guarded by l.mu.
	state http.ConnState
	since uint64
}

// Accept takes the next connection first, so that a slot is made only
// for a client that is there; it holds one connection more than n while
// it waits for a slot, and none past that.
func (l *limiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	hc := &heldConn{Conn: c, l: l, state: http.StateNew}
	for {
		l.mu.Lock()
		var victim *heldConn
		if len(l.held) >= l.n {
			victim = l.oldestFree()
			if victim != nil {
				delete(l.held, victim)
			}
		}
		if len(l.held) < l.n {
			l.tick++
			hc.since = l.tick
			l.held[hc] = struct{}{}
			l.mu.Unlock()
			if victim != nil {
				// The server's goroutine for it sees the read fail
				// and ends quietly; its own Close finds no slot to
				// free.
				_ = victim.Conn.Close()
			}
			return hc, nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-l.closed:
			// A server shut down while every slot is held must not
			// wait for one.
			_ = c.Close()
			return nil, net.ErrClosed
		}
	}
}

// oldestFree returns the held connection without a request in progress
// that has been so the longest, or nil. l.mu is held.
func (l *limiter) oldestFree() *heldConn {
	var oldest *heldConn
	for c := range l.held {
		if (c.state == http.StateNew || c.state == http.StateIdle) && (oldest == nil || c.since < oldest.since) {
			oldest = c
		}
	}
	return oldest
}

// track follows the server's view of each connection. net/http reports a
// connection active only once a request's headers are all read, so one
// that trickles its headers (slowloris) is still new, or idle on a
// kept-alive connection, and is let go as readily as one that sends
// nothing. Closing a connection just as its request's headers are read
// is the race every HTTP/1.1 server has with idle connections, and
// clients retry a request that failed on a reused connection.
//
// A hijacked connection keeps its slot, not free to let go, until its new
// owner closes it: it still holds a descriptor, and the server no longer
// reports on it.
func (l *limiter) track(c net.Conn, s http.ConnState) {
	hc, ok := c.(*heldConn)
	if !ok {
		return
	}
	if s == http.StateClosed {
		l.release(hc)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[hc]; !ok || hc.state == s {
		return // let go already, or the server's StateNew after Accept's
	}
	hc.state = s
	if s == http.StateIdle {
		l.tick++
		hc.since = l.tick
		l.signal()
	}
}

// release frees hc's slot, once.
func (l *limiter) release(hc *heldConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.held[hc]; ok {
		delete(l.held, hc)
		l.signal()
	}
}

// signal wakes Accept's wait; l.mu is held.
func (l *limiter) signal() {
	close(l.wake)
	l.wake = make(chan struct{})
}

func (l *limiter) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func (c *heldConn) Close() error {
	err := c.Conn.Close()
	c.l.release(c)
	return err
}
