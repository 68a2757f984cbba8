package daemon

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

// TestListenAddressInUse: an address in use is a *ListenError naming it,
// before any job runs.
func TestListenAddressInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Its syncs would return at once (release is closed) and say so on
	// started.
	eng := &stuckEngine{started: make(chan struct{}, 1), release: make(chan struct{})}
	close(eng.release)
	err = Serve(context.Background(), Config{
		Open:   func(context.Context) (Engine, error) { return eng, nil },
		Listen: ln.Addr().String(),
	})
	var le *ListenError
	if !errors.As(err, &le) || le.Addr != ln.Addr().String() || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("Serve on an address in use: %v, want a *ListenError naming %s", err, ln.Addr())
	}
	select {
	case <-eng.started:
		t.Error("a sync ran although the daemon could not serve")
	default:
	}
}

// TestListenAddr: a port alone is loopback; another host is kept.
func TestListenAddr(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want string
		loopback bool
	}{{":9464", "127.0.0.1:9464", true}, {"9464", "127.0.0.1:9464", true}, {"127.0.0.1:9464", "127.0.0.1:9464", true},
		{"localhost:1", "localhost:1", true}, {"0.0.0.0:9464", "0.0.0.0:9464", false}, {"[::1]:9464", "[::1]:9464", true}} {
		got, lb, err := ListenAddr(tt.in)
		if err != nil || got != tt.want || lb != tt.loopback {
			t.Errorf("ListenAddr(%q) = %q, %v, %v; want %q, %v", tt.in, got, lb, err, tt.want, tt.loopback)
		}
	}
	if _, _, err := ListenAddr("a:b:c"); err == nil {
		t.Error("ListenAddr(a:b:c) did not fail")
	}
}
