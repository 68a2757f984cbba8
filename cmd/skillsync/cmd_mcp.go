package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/mcp"
	"github.com/skillsync/skillsync/skill"
)

func (a *app) mcpCommand() *cobra.Command {
	var httpAddr string
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the workspace's skills to agents over the Model Context Protocol",
		Long: `Serve the workspace's skills to agents as an MCP server, over stdio (the
default) or over streamable HTTP with --http.

Tools: search_skills(query, limit), list_skills(), load_skill(name),
read_skill_file(name, path) and loaded_skills(). Each skill's SKILL.md is a
resource (skill://NAME/SKILL.md, any other file skill://NAME/PATH), and the
prompt available_skills renders the <available_skills> block.

load_skill records a use and read_skill_file a view in skills/.usage.json,
as skillsync use does, so curation sees what agents really use. A skill
loaded twice in one session is answered "already loaded"; loaded_skills
gives back what the session loaded. When a sync lands while the server
runs, the next call sees the new catalog. Hidden and archived skills are
invisible. Changes to skillsync.yaml need a restart.

--http serves without authentication, so it only listens on a loopback
address; the endpoint is http://ADDR/mcp. SIGINT or SIGTERM stops it.`,
		Example: `  skillsync mcp
  skillsync mcp --http 127.0.0.1:8765
  claude mcp add skillsync -- skillsync mcp`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runMCP(c.Context(), httpAddr)
		},
	}
	c.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	return c
}

// stampEvery is how often the server looks for a changed workspace: a
// sync that lands is seen within this time.
const stampEvery = time.Second

func (a *app) runMCP(ctx context.Context, httpAddr string) error {
	if httpAddr != "" {
		if err := loopback(httpAddr); err != nil {
			return &exitError{code: exitUsage, err: err}
		}
	}
	eng, err := a.engine()
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	if !a.quiet {
		log = slog.New(slog.NewTextHandler(a.stderr, nil))
	}
	srv, err := mcp.New(ctx, newEngineWorkspace(eng, a.reportProblems), mcp.Options{Version: buildVersion(), Logger: log, StampEvery: stampEvery})
	if err != nil {
		return err
	}
	if httpAddr == "" {
		return srv.Run(ctx, &sdk.StdioTransport{})
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
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
		return nil
	}
	return err
}

// engineWorkspace adapts an Engine to the MCP server's Workspace until the
// engine implements it itself.
type engineWorkspace struct {
	eng      *skillsync.Engine
	problems func([]skill.Problem)
	manifest string
	layers   []string // directories of the layers read in place
}

func newEngineWorkspace(eng *skillsync.Engine, problems func([]skill.Problem)) *engineWorkspace {
	cfg := eng.Config()
	w := &engineWorkspace{eng: eng, problems: problems, manifest: filepath.Join(eng.CacheDir(), ".manifest.json")}
	if cfg.Global != "" {
		w.layers = append(w.layers, cfg.Global)
	}
	w.layers = append(w.layers, eng.SkillsDir())
	if cfg.User != "" {
		w.layers = append(w.layers, filepath.Join(cfg.Workspace, cfg.User, "skills"))
	}
	return w
}

func (w *engineWorkspace) Catalog(ctx context.Context) (*layering.Catalog, error) {
	cat, err := w.eng.Catalog(ctx)
	if err == nil {
		w.problems(cat.Problems)
	}
	return cat, err
}

func (w *engineWorkspace) Record(ctx context.Context, name string, view bool) error {
	_, err := w.eng.Use(ctx, name, view)
	return err
}

// Stamp hashes the manifest's size and time, and for every layer read in
// place the names and times of its skill directories and their SKILL.md.
// Dot files are left out: the usage file changes with every use and says
// nothing about the catalog (archiving moves a directory or rewrites the
// manifest). It costs two stats per local skill, which is why the server
// reads it at most once per stampEvery.
func (w *engineWorkspace) Stamp() (string, error) {
	h := fnv.New64a()
	buf := make([]byte, 0, 512)
	buf = stampFile(buf, w.manifest)
	for _, dir := range w.layers {
		entries, err := os.ReadDir(dir)
		if err != nil {
			buf = append(buf, dir...)
			buf = append(buf, " -\n"...)
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			buf = stampFile(buf, p)
			buf = stampFile(buf, filepath.Join(p, "SKILL.md"))
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return strconv.FormatUint(h.Sum64(), 16), nil
}

// stampFile appends p's size and modification time to buf, or a dash when
// p cannot be read.
func stampFile(buf []byte, p string) []byte {
	buf = append(buf, p...)
	info, err := os.Stat(p)
	if err != nil {
		return append(buf, " -\n"...)
	}
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, info.Size(), 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, info.ModTime().UnixNano(), 10)
	return append(buf, '\n')
}

var _ mcp.Workspace = (*engineWorkspace)(nil)
