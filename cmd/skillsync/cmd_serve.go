package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/internal/httpserver"
	"github.com/skillsync/skillsync/serve"
)

type serveOptions struct {
	listen string
}

// serveTokenEnv holds the token a server on a non-loopback address asks for.
const serveTokenEnv = "SKILLSYNC_SERVE_TOKEN"

func newServeCommand(a *app, runF func(context.Context, *serveOptions) error) *cobra.Command {
	opts := &serveOptions{}
	c := &cobra.Command{
		Annotations: map[string]string{longRunning: "yes"},
		Use:         "serve",
		Short:       "Serve a read-only web catalog of the workspace's skills",
		Long: `Serve a web catalog of the workspace: every winning skill with its
description, layer, source, state and uses in the last 30 days, with search
and filters; a page per skill (its SKILL.md rendered, its files, where it
comes from and a chart of its use over 12 weeks); the sources and targets;
what curation will do; the drafts waiting for a person, with their diffs and
the commands that promote or reject them; and the fleet.

Nothing is written: every route is read-only, and every change is still made
with the skillsync command. Each page reads the workspace as it is then: a
sync that landed, and an edit of skillsync.yaml (skillsync add, remove, a
skill hidden), are shown without a restart; a config edited into one that
does not load is said once, and the one before it served until it loads. Skill content is untrusted: raw HTML in a
SKILL.md is dropped, only http(s) and relative links are kept, and every page
carries Content-Security-Policy: default-src 'self'.

The server listens on 127.0.0.1:8080 and answers only requests addressed to
a loopback name. Another address needs a token in $` + serveTokenEnv + `:
browsers open /login?token=TOKEN once, programs send
Authorization: Bearer TOKEN. SIGINT or SIGTERM stops it.`,
		Example: `  skillsync serve
  skillsync serve --listen 127.0.0.1:9000
  SKILLSYNC_SERVE_TOKEN=$(openssl rand -hex 16) skillsync serve --listen 0.0.0.0:8080`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runServe)(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.listen, "listen", "127.0.0.1:8080", "address to listen on; a non-loopback one needs $"+serveTokenEnv)
	return c
}

func (a *app) runServe(ctx context.Context, opts *serveOptions) error {
	host, _, err := net.SplitHostPort(opts.listen)
	if err != nil {
		return usageError("--listen %s: %w; give HOST:PORT such as 127.0.0.1:8080", opts.listen, err)
	}
	token := a.env.Getenv(serveTokenEnv)
	sopts := serve.Options{Token: token}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		if token == "" {
			return usageError("--listen %s is not a loopback address: set %s to a token that browsers give once at /login?token=... and programs send as a bearer header", opts.listen, serveTokenEnv)
		}
		sopts.Hosts = append(sopts.Hosts, host)
	}
	live, err := a.liveEngine()
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	if !a.quiet {
		log = slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	sopts.Logger = log
	srv, err := serve.New(serveBackend{live: live}, sopts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		return usageError("--listen %s: %w", opts.listen, err)
	}
	if len(sopts.Hosts) > 0 {
		log.Warn("serving on a non-loopback address: every request needs the token", "addr", ln.Addr().String())
	}
	hs, ln := httpserver.New(srv.Handler(), ln, httpserver.Pages())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	fmt.Fprintf(a.stderr, "skillsync serve: http://%s/\n", ln.Addr())
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
