package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillsync/skillsync/repository"
)

// Backoff of Listen between connection attempts: it starts at
// listenBackoffMin, doubles, and stays at listenBackoffMax.
const (
	listenBackoffMin = 250 * time.Millisecond
	listenBackoffMax = 30 * time.Second
)

// revisionPayload is compiled at its first use: a package-level regexp
// cost every start of the CLI its compilation.
var revisionPayload = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+-[0-9a-f]{12}$`) })

// Listen calls changed with the source's revision each time a change to it
// commits, until ctx ends. It holds a connection of its own, LISTENing on
// the channel named after the schema. Each time it has (re)connected it
// also calls changed once with the current revision, so a change committed
// while it was disconnected is not missed; the caller compares revisions
// and syncs when one is new. When no notification comes for a minute it
// asks for the revision itself, which finds a connection that died
// silently and a change whose notification was lost.
//
// A lost connection is retried with a backoff from 250ms up to 30s (with
// jitter, so a fleet does not reconnect at once), each failure reported to
// the config's Logf. Listen returns ctx's error when ctx ends, and
// returns at once only when the connection string cannot be had: no retry
// would help then. changed runs on Listen's goroutine: a slow one delays
// the next notification, never loses it.
func (p *Postgres) Listen(ctx context.Context, changed func(repository.Revision)) error {
	backoff := listenBackoffMin
	for {
		connected, err := p.listen(ctx, changed)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrDSN) {
			return err
		}
		if connected {
			backoff = listenBackoffMin
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		if p.cfg.Logf != nil {
			p.cfg.Logf("%v; listening again in %v", err, wait.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(backoff*2, listenBackoffMax)
	}
}

// listenCheck is how long Listen waits for a notification before it asks
// for the revision itself: a connection that died without a word (a
// dropped network path) is found within it, and a change whose
// notification was lost is still reported.
const listenCheck = time.Minute

// listen is one connection's life: connect, LISTEN, report the current
// revision, then every change until the connection fails. connected says
// whether it got as far as listening.
func (p *Postgres) listen(ctx context.Context, changed func(repository.Revision)) (connected bool, err error) {
	conn, pool, err := p.dedicated(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		conn.Close(closing)
	}()
	setup, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	if _, err := conn.Exec(setup, "LISTEN "+p.schema); err != nil {
		return false, p.fail("listen", err)
	}
	var last repository.Revision
	err = p.withSchema(setup, pool, func() error {
		last, err = p.revision(setup, conn)
		return err
	})
	if err != nil {
		return false, p.fail("read revision", err)
	}
	changed(last)
	for {
		wait, cancel := context.WithTimeout(ctx, listenCheck)
		n, err := conn.WaitForNotification(wait)
		cancel()
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		rev := repository.Revision("")
		if err == nil && revisionPayload().MatchString(n.Payload) {
			rev = repository.Revision(n.Payload)
		} else if err == nil || errors.Is(err, context.DeadlineExceeded) {
			// Quiet for a while, or someone else notified the channel:
			// ask the table.
			q, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
			rev, err = p.revision(q, conn)
			cancel()
		}
		if err != nil {
			return true, p.fail("wait for changes", err)
		}
		if rev != last {
			last = rev
			changed(rev)
		}
	}
}

// dedicated returns a connection of its own, taken out of the pool so
// that it is never handed to anyone else while it listens.
func (p *Postgres) dedicated(ctx context.Context) (*pgx.Conn, *pgxpool.Pool, error) {
	setup, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	pool, err := p.connect(setup)
	if err != nil {
		return nil, nil, err
	}
	c, err := pool.Acquire(setup)
	if err != nil {
		return nil, nil, p.fail("connect", err)
	}
	return c.Hijack(), pool, nil
}
