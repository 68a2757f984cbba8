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
// streams that stay open (MCP's event streams).
type Limits struct {
	Read, Write, Idle time.Duration
	Conns             int
}

// Pages returns the limits of a server that answers with one page or
// document per request: a client that stops reading is let go after a
// minute, as is an idle kept-alive connection.
func Pages() Limits {
	return Limits{Read: 30 * time.Second, Write: time.Minute, Idle: time.Minute, Conns: 64}
}

// New returns a server for h with the limits l but l.Conns, which
// Listener applies.
func New(h http.Handler, l Limits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       l.Read,
		WriteTimeout:      l.Write,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    64 << 10,
	}
}

// Listener returns ln holding at most n connections open at once (none
// when n <= 0): the next is accepted once one closes, and until then
// waits in the system's queue. Without it every idle or slow client
// holds a descriptor, and enough of them stop the daemon's syncs.
func Listener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return &limited{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

type limited struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

// Accept waits for a free slot, or for the listener to close: a server
// shut down while every slot is held must not wait for one.
func (l *limited) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
}

func (l *limited) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

type slotConn struct {
	net.Conn
	once sync.Once
	free func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
