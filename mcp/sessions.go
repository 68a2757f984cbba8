package mcp

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of Options for HTTP sessions.
const (
	// DefaultSessionIdle is how long an HTTP session may go without a
	// request before it is closed.
	DefaultSessionIdle = 30 * time.Minute
	// DefaultMaxSessions is how many sessions may be open at once; a new
	// one past it closes the one idle longest.
	DefaultMaxSessions = 256
)

// liveSessions is when each open session last sent a request. It bounds
// what clients that never say goodbye can make the server hold: every
// session keeps its transport, its ledger and its streams.
type liveSessions struct {
	mu   sync.Mutex
	last map[*sdk.ServerSession]time.Time
}

// touch notes a request of ss now. A session seen for the first time is
// forgotten when it ends.
func (l *liveSessions) touch(ss *sdk.ServerSession) {
	l.mu.Lock()
	_, known := l.last[ss]
	l.last[ss] = time.Now()
	l.mu.Unlock()
	if !known {
		go func() {
			_ = ss.Wait()
			l.mu.Lock()
			delete(l.last, ss)
			l.mu.Unlock()
		}()
	}
}

// trim closes the sessions idle longest until at most max are open,
// never keep (the session that is being opened).
func (l *liveSessions) trim(max int, keep *sdk.ServerSession) {
	l.mu.Lock()
	over := len(l.last) - max
	var oldest []*sdk.ServerSession
	if over > 0 {
		type seen struct {
			ss *sdk.ServerSession
			at time.Time
		}
		all := make([]seen, 0, len(l.last))
		for ss, at := range l.last {
			if ss != keep {
				all = append(all, seen{ss, at})
			}
		}
		slices.SortFunc(all, func(a, b seen) int { return cmp.Compare(a.at.UnixNano(), b.at.UnixNano()) })
		for _, s := range all[:min(over, len(all))] {
			oldest = append(oldest, s.ss)
			delete(l.last, s.ss)
		}
	}
	l.mu.Unlock()
	for _, ss := range oldest {
		ss.Close()
	}
}

// track is the middleware that keeps liveSessions: every request touches
// its session, and a new session makes room for itself.
func (s *Server) track(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if ss, ok := req.GetSession().(*sdk.ServerSession); ok && ss != nil {
			s.live.touch(ss)
			if method == "initialize" {
				s.live.trim(s.opts.MaxSessions, ss)
			}
		}
		return next(ctx, method, req)
	}
}
