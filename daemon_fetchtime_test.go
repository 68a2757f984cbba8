package skillsync

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/skillsync/skillsync/daemon"
)

// TestFailedFetchTimeIsReported: a fetch that fails after its timeout
// (a remote that accepts and never answers) reports the time it took to
// the daemon, for skillsync_source_fetch_duration_seconds. It reported
// 0, as a source read in place does: a hanging remote looked the fastest.
func TestFailedFetchTimeIsReported(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never answered
		}
	}()
	e, _ := newWorkspace(t, "repositories:\n  - name: silent\n    git: http://"+ln.Addr().String()+"/x.git\n    timeout: 1s\n")
	res, err := e.Daemon().Sync(context.Background(), daemon.SyncRequest{})
	if err == nil || res == nil || len(res.Sources) != 1 || res.Sources[0].Err == "" {
		t.Fatalf("a sync of a silent remote: %+v, %v", res, err)
	}
	if got := res.Sources[0].FetchDuration; got < 900*time.Millisecond {
		t.Errorf("the failed fetch took %v, want about its 1s timeout", got)
	}
}
