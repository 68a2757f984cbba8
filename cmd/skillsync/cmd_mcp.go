package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync/drafts"
	"github.com/skillsync/skillsync/internal/httpserver"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/mcp"
)

type mcpOptions struct {
	http string
}

func newMCPCommand(a *app, runF func(context.Context, *mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{}
	c := &cobra.Command{
		Annotations: map[string]string{longRunning: "yes"},
		Use:         "mcp",
		Short:       "Serve the workspace's skills to agents over the Model Context Protocol",
		Long: `Serve the workspace's skills to agents as an MCP server, over stdio (the
default) or over streamable HTTP with --http.

Tools: search_skills(query, limit), list_skills(), load_skill(name),
read_skill_file(name, path, offset), loaded_skills() and propose_skill(name,
files), which writes a draft for a person to promote (skillsync drafts). A
long file or skill is sent 24,000 characters at a time, the answer naming
the offset that reads on. Each skill's SKILL.md is a
resource (skill://NAME/SKILL.md, any other file skill://NAME/PATH), and the
prompt available_skills renders the <available_skills> block.

load_skill records a use and read_skill_file a view in skills/.usage.json,
as skillsync use does, so curation sees what agents really use. A skill
loaded twice in one session is answered "already loaded"; loaded_skills
gives back what the session loaded, the most recent first, up to 96,000
characters in all: a skill past that is named, and load_skill sends it
again (no new use). When a sync lands while the server
runs, the next call sees the new catalog, and connected clients are told
within a second (notifications/resources/list_changed and
prompts/list_changed). A skill loaded again in the same session is no new
use. Hidden and archived skills are invisible. An edit of skillsync.yaml
(skillsync add, remove, a skill hidden) is read at the next call; one that
does not load is said once, and the config before it kept until it loads.

--http serves without authentication, so it only listens on a loopback
address; the endpoint is http://ADDR/mcp. A session idle for 30 minutes is
closed, and at most 256 are open at once (a new one closes the one idle
longest). Over stdio, every request read before the input ends is answered
before the server exits. SIGINT or SIGTERM stops it. Before it exits, over
stdio or HTTP, it waits up to a minute for the uses and views still being
recorded (a use waits for the usage file while another writer holds it), so
that none is lost; a second signal, a second or more later, stops it at once.`,
		Example: `  skillsync mcp
  skillsync mcp --http 127.0.0.1:8765
  claude mcp add skillsync -- skillsync mcp`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return pick(runF, a.runMCP)(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.http, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	return c
}

// stampEvery is how often the server looks for a changed workspace: a
// sync that lands is seen within this time.
const stampEvery = time.Second

func (a *app) runMCP(ctx context.Context, opts *mcpOptions) error {
	httpAddr := opts.http
	if httpAddr != "" {
		if err := loopback(httpAddr); err != nil {
			return &usageErr{err: err}
		}
	}
	live, err := a.liveEngine()
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	if !a.quiet {
		log = slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	srv, err := mcp.New(ctx, mcpWorkspace{live}, mcp.Options{Version: buildVersion(), Logger: log, StampEvery: stampEvery, Env: a.env})
	if err != nil {
		return err
	}
	go srv.Watch(ctx)
	if httpAddr == "" {
		return srv.Run(ctx, mcp.Stdio(os.Stdin, os.Stdout))
	}
	return serveMCPHTTP(ctx, srv, httpAddr, a.stderr)
}

// loopback refuses an address that other machines could reach: the server
// has no authentication.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w; give 127.0.0.1:PORT", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("--http %s: the MCP server has no authentication and listens on loopback addresses only; give 127.0.0.1:PORT", addr)
}

// serveMCPHTTP serves srv at http://addr/mcp until ctx ends.
func serveMCPHTTP(ctx context.Context, srv *mcp.Server, addr string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	// No read or write limit on a request as a whole: an event stream
	// stays open. A body has 30 seconds to arrive (mcpHandler), and
	// each write to the client 30 seconds to be taken (Stall), so that a
	// client that stops reading its stream or a long answer lets go of
	// its slot. Each session holds its stream and may have a request in
	// flight, and a session past the server's limit must get through to
	// close the one idle longest: room for twice the sessions, and some.
	hs, ln := httpserver.New(mcpHandler(srv.Handler(), mcpBodyDeadline), ln,
		httpserver.Limits{Idle: time.Minute, Stall: httpserver.DefaultStall, Conns: 2*mcp.DefaultMaxSessions + 64})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		// Open event streams never go idle: give requests in flight a
		// moment, then close the rest.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
	}()
	fmt.Fprintf(stderr, "skillsync mcp: serving http://%s/mcp\n", ln.Addr())
	err = hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		err = nil
	}
	// A use answered while the usage file was busy is still being
	// recorded, and the process's exit would lose it: wait for it, as
	// stdio does. The signal that ended ctx does not cut the wait
	// short; Drain bounds it.
	srv.Drain(context.WithoutCancel(ctx))
	return err
}

// mcpBodyDeadline is how long a request's body has to arrive at mcp
// --http, a server without a read timeout.
const mcpBodyDeadline = 30 * time.Second

// mcpHandler is what mcp --http serves: h at /mcp, and a body deadline
// of d on every request. The deadline goes around all of it, not only
// h: net/http reads what is left of a body a handler did not read (a
// 404 elsewhere, a 403 to another site's page) after it returns, and
// without a deadline a client that sent headers and no body held its
// connection, and a slot, for good.
func mcpHandler(h http.Handler, d time.Duration) http.Handler {
	mux := http.NewServeMux()
	// A page of another site in the user's browser may send a POST to a
	// loopback port; its tools propose drafts. The SDK refuses another
	// site's name (Host) itself, not another site's page.
	mux.Handle("/mcp", http.NewCrossOriginProtection().Handler(h))
	return httpserver.BodyDeadline(mux, d)
}

// mcpWorkspace is the engine as the MCP server sees it: a workspace whose
// catalog changes are watched and whose promotion gate takes proposals.
type mcpWorkspace struct{ live *liveEngine }

func (w mcpWorkspace) Catalog(ctx context.Context) (*layering.Catalog, error) {
	return w.live.get().Catalog(ctx)
}

func (w mcpWorkspace) Record(ctx context.Context, name string, view bool) error {
	return w.live.get().Record(ctx, name, view)
}

// Stamp moves with the catalog and with the config, which may add a
// source or hide a skill.
func (w mcpWorkspace) Stamp() (string, error) {
	stamp, err := w.live.get().Stamp()
	return stamp + "/" + w.live.stamp(), err
}

// WatchDirs are the engine's, and the config's folder: an edit of the
// config is heard when it happens.
func (w mcpWorkspace) WatchDirs() []string {
	dirs := w.live.get().WatchDirs()
	if w.live.path != "" {
		dirs = append(dirs, filepath.Dir(w.live.path))
	}
	return dirs
}

// ProposeSkill is propose_skill: the gate's ProposeFiles. Below a
// workspace whose config is in a folder above (an agent that started the
// server in a subfolder), it refuses, as skillsync propose does there:
// the draft would start a second workspace's skills/ in the subfolder.
func (w mcpWorkspace) ProposeSkill(ctx context.Context, name string, files map[string]string) (drafts.Draft, error) {
	eng := w.live.get()
	if above := eng.Config().Above; above != "" {
		return drafts.Draft{}, nestedWorkspace(above)
	}
	return eng.Gate().ProposeFiles(ctx, name, files)
}

var (
	_ mcp.Workspace = mcpWorkspace{}
	_ mcp.Watched   = mcpWorkspace{}
	_ mcp.Proposer  = mcpWorkspace{}
)
