package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTransport holds back the end of its input (or an error reading
// it) until every request read before it was answered, so that
// `printf '...' | skillsync mcp` gets an answer to each request and not
// only to those that were quick.
type drainTransport struct {
	sdk.Transport
}

// drainWait bounds how long the end of input waits for answers.
const drainWait = time.Minute

func (t drainTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	d := &drainConn{Connection: c}
	d.answered = sync.NewCond(&d.mu)
	return d, nil
}

type drainConn struct {
	sdk.Connection

	mu       sync.Mutex
	answered *sync.Cond
	pending  int // requests read and not yet answered
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.mu.Lock()
			c.pending++
			c.mu.Unlock()
		}
		return msg, nil
	}
	// The input ended, or broke off: either ends the connection, and
	// what was read before is answered first.
	c.wait(ctx)
	return nil, err
}

func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		c.pending--
		c.answered.Broadcast()
		c.mu.Unlock()
	}
	return err
}

// wait returns when every request read was answered, ctx ended or
// drainWait passed.
func (c *drainConn) wait(ctx context.Context) {
	stop := context.AfterFunc(ctx, c.wake)
	defer stop()
	timer := time.AfterFunc(drainWait, c.wake)
	defer timer.Stop()
	deadline := time.Now().Add(drainWait)
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.pending > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		c.answered.Wait()
	}
}

func (c *drainConn) wake() {
	c.mu.Lock()
	c.answered.Broadcast()
	c.mu.Unlock()
}

// inFlight counts the uses and views being recorded after their answers
// went out (record), so that a server that stops can wait for them: the
// process's exit would lose them. Unlike a WaitGroup, it may be added to
// while Drain waits (a request the HTTP server cut off in mid-call), and
// it says how many are left, for the log.
type inFlight struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed when n falls to 0; nil while no one waits
}

func (f *inFlight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.none != nil {
		close(f.none)
		f.none = nil
	}
}

// idle returns how many records are under way, and a channel closed
// once none is.
func (f *inFlight) idle() (int, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		done := make(chan struct{})
		close(done)
		return 0, done
	}
	if f.none == nil {
		f.none = make(chan struct{})
	}
	return f.n, f.none
}
