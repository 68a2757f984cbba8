package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/skillsync/skillsync/internal/httpserver"
	"github.com/skillsync/skillsync/internal/metrics"
)

// ListenError is a metrics address that cannot be served: one that does
// not parse, or is in use.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("cannot serve metrics on %s: %v", e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// ListenAddr completes addr: a port alone (":9464" or "9464") is on the
// loopback interface; loopback says whether the address is.
func ListenAddr(addr string) (full string, loopback bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, _, perr := net.SplitHostPort(":" + addr); perr != nil {
			return "", false, &ListenError{Addr: addr, Err: err}
		}
		host, port = "", addr
	}
	if host == "" {
		host = "127.0.0.1"
	}
	full = net.JoinHostPort(host, port)
	if host == "localhost" {
		return full, true, nil
	}
	ip := net.ParseIP(host)
	return full, ip != nil && ip.IsLoopback(), nil
}

// listen binds addr (see ListenAddr), logging when it is not loopback.
func listen(addr string, log *slog.Logger) (net.Listener, error) {
	full, loopback, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", full)
	if err != nil {
		return nil, &ListenError{Addr: full, Err: err}
	}
	if !loopback {
		log.Warn("serving metrics and health beyond this machine, as asked", "listen", ln.Addr().String())
	}
	return ln, nil
}

// handler serves /metrics, /healthz and /readyz from m; none waits for a
// job.
func (m *monitor) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", metrics.ContentType)
		if err := m.reg.Write(w); err != nil {
			m.log.Debug("a /metrics scrape ended early", "error", err.Error())
		}
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		problems := m.Snapshot().NotReady(m.now())
		body := struct {
			Ready    bool       `json:"ready"`
			NotReady []NotReady `json:"not_ready"`
		}{len(problems) == 0, problems}
		if body.NotReady == nil {
			body.NotReady = []NotReady{}
		}
		w.Header().Set("Content-Type", "application/json")
		if !body.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	return mux
}

// serveHTTP serves m on ln until ctx ends.
func (m *monitor) serveHTTP(ctx context.Context, ln net.Listener) error {
	// The same limits as serve's pages, and the same refusal of another
	// site's name on a loopback address: the metrics name sources, paths
	// and errors.
	srv, ln := httpserver.New(httpserver.GuardLoopback(m.handler()), ln, httpserver.Pages())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	m.log.Info("serving metrics and health", "listen", ln.Addr().String())
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if e := <-done; !errors.Is(e, http.ErrServerClosed) && err == nil {
			err = e
		}
		return err
	}
}
