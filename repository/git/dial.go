package git

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/net/proxy"
)

// sshRelay is a SOCKS5 proxy on 127.0.0.1 that serves one fetch. go-git
// dials an SSH host without a context and then waits for the server's
// banner with no deadline, so a host that accepts and stays silent hung a
// fetch forever. Routed through the relay, each connection is dialled
// with the fetch's context and closed when that context ends, which ends
// go-git's wait with an error.
//
// The relay accepts only the one client that knows its random password,
// so no other user of the machine can borrow it as a proxy.
type sshRelay struct {
	ctx      context.Context
	ln       net.Listener
	password string
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
	stop     chan struct{} // closed by shut
	wg       sync.WaitGroup
	// budget bounds the bytes the server may send on each connection
	// opened while it is set (0: no bound); over is set when a connection
	// was cut at it.
	budget atomic.Int64
	over   atomic.Bool
}

// startSSHRelay starts a relay that lives until ctx ends or Close.
func startSSHRelay(ctx context.Context) (*sshRelay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start ssh relay: %w", err)
	}
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		ln.Close()
		return nil, err
	}
	r := &sshRelay{ctx: ctx, ln: ln, password: hex.EncodeToString(secret[:]), conns: map[net.Conn]struct{}{}, stop: make(chan struct{})}
	r.wg.Add(2)
	go r.serve()
	go func() {
		defer r.wg.Done()
		select {
		case <-ctx.Done():
			r.shut()
		case <-r.stop:
		}
	}()
	return r, nil
}

// Proxy returns the options that route go-git through the relay; those
// of a nil relay route nowhere.
func (r *sshRelay) Proxy() transport.ProxyOptions {
	if r == nil {
		return transport.ProxyOptions{}
	}
	return transport.ProxyOptions{URL: "socks5://" + r.ln.Addr().String(), Username: "skillsync", Password: r.password}
}

// Close closes the relay and every connection through it, and waits for
// its goroutines. Closing a nil relay does nothing.
func (r *sshRelay) Close() {
	if r == nil {
		return
	}
	r.shut()
	r.wg.Wait()
}

// limit bounds the bytes the server may send on each connection opened
// from now on: past n the connection is cut and cut reports true. 0 lifts
// the bound. The bytes counted are SSH's, encrypted: a relay cannot see
// what they carry.
func (r *sshRelay) limit(n int64) { r.budget.Store(n) }

// cut reports whether a connection was cut at its limit.
func (r *sshRelay) cut() bool { return r.over.Load() }

func (r *sshRelay) shut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	close(r.stop)
	r.ln.Close()
	for c := range r.conns {
		c.Close()
	}
}

// track adds c to the connections closed with the relay; false means the
// relay is already closed, and c was closed.
func (r *sshRelay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *sshRelay) untrack(c net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.conns, c)
	c.Close()
}

func (r *sshRelay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(c)
			r.relay(c)
		}()
	}
}

// relay answers one SOCKS5 CONNECT (RFC 1928, with the password method of
// RFC 1929) and copies bytes both ways until either side closes.
func (r *sshRelay) relay(c net.Conn) {
	target, err := r.handshake(c)
	if err != nil {
		return
	}
	// proxy.Dial is what go-git dials with, so ALL_PROXY still applies.
	up, err := proxy.Dial(r.ctx, "tcp", target)
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0}) // connection refused
		return
	}
	if !r.track(up) {
		return
	}
	defer r.untrack(up)
	if _, err := c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		return
	}
	budget := r.budget.Load()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() {
		if budget <= 0 {
			io.Copy(c, up)
		} else if n, _ := io.Copy(c, io.LimitReader(up, budget+1)); n > budget {
			r.over.Store(true)
		}
		done <- struct{}{}
	}()
	<-done
	// One side is gone: closing both ends the other copy.
	up.Close()
	c.Close()
	<-done
}

var errSOCKS = errors.New("bad SOCKS5 request")

// handshake reads the client's greeting, login and CONNECT request, and
// returns the host:port it asks for.
func (r *sshRelay) handshake(c net.Conn) (string, error) {
	var head [2]byte
	if _, err := io.ReadFull(c, head[:]); err != nil || head[0] != 5 {
		return "", errSOCKS
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", errSOCKS
	}
	if _, err := c.Write([]byte{5, 2}); err != nil { // username and password
		return "", err
	}
	// RFC 1929: VER ULEN UNAME PLEN PASSWD.
	if _, err := io.ReadFull(c, head[:]); err != nil || head[0] != 1 {
		return "", errSOCKS
	}
	user := make([]byte, head[1])
	if _, err := io.ReadFull(c, user); err != nil {
		return "", errSOCKS
	}
	var plen [1]byte
	if _, err := io.ReadFull(c, plen[:]); err != nil {
		return "", errSOCKS
	}
	pass := make([]byte, plen[0])
	if _, err := io.ReadFull(c, pass); err != nil {
		return "", errSOCKS
	}
	if subtle.ConstantTimeCompare(pass, []byte(r.password)) != 1 {
		c.Write([]byte{1, 1})
		return "", errSOCKS
	}
	if _, err := c.Write([]byte{1, 0}); err != nil {
		return "", err
	}
	// VER CMD RSV ATYP ADDR PORT; only CONNECT is served.
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil || req[0] != 5 || req[1] != 1 {
		return "", errSOCKS
	}
	var host string
	switch req[3] {
	case 1, 4:
		ip := make(net.IP, map[byte]int{1: 4, 4: 16}[req[3]])
		if _, err := io.ReadFull(c, ip); err != nil {
			return "", errSOCKS
		}
		host = ip.String()
	case 3:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", errSOCKS
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(c, name); err != nil {
			return "", errSOCKS
		}
		host = string(name)
	default:
		return "", errSOCKS
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return "", errSOCKS
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))), nil
}
