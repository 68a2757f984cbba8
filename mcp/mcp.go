// Package mcp serves a workspace's skill catalog to agents over the Model
// Context Protocol: tools to search, list, load and read skills, the skills
// as resources, and a prompt that renders the <available_skills> block.
//
// The server keeps a per-connection ledger of the skills it sent, records a
// use for every load_skill and a view for every read_skill_file through its
// Workspace, and re-reads the catalog when the Workspace's stamp changes, so
// a sync that lands while the server runs is seen without a restart. Hidden
// and archived skills are invisible to it. It never writes skills.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/layering"
)

// Workspace is what the server needs of a workspace.
type Workspace interface {
	// Catalog reads the workspace's merged catalog.
	Catalog(ctx context.Context) (*layering.Catalog, error)
	// Record counts a use of the named skill (or, with view, a view) made
	// through MCP. The server calls it exactly once per load_skill or
	// read_skill_file call that succeeds.
	Record(ctx context.Context, name string, view bool) error
	// Stamp returns a value that changes whenever the catalog may have
	// changed (a sync landed, a local skill was edited). It is called once
	// per request, so it must be cheap: a few stats, not a catalog read.
	Stamp() (string, error)
}

// Defaults of Options.
const (
	DefaultLedgerSize = 20
	DefaultMaxChars   = 24000
	// DefaultMaxResourceBytes caps a resource read; read_skill_file shows
	// the start of a larger file.
	DefaultMaxResourceBytes = 8 << 20
)

// Options change a Server. The zero value is ready to use.
type Options struct {
	// Name and Version identify the server to clients; "skillsync" and
	// "dev" when empty.
	Name, Version string
	// Logger receives catalog reloads and failures that do not fail a call
	// (a use that could not be recorded). nil discards them.
	Logger *slog.Logger
	// LedgerSize is how many loaded skills a connection's ledger keeps,
	// most recent first; DefaultLedgerSize when zero.
	LedgerSize int
	// MaxChars is how many characters of one file an answer carries:
	// where read_skill_file cuts a page of a text file and load_skill and
	// loaded_skills a skill's instructions. DefaultMaxChars when zero.
	// loaded_skills gives back four times as many in all (loadedChars).
	MaxChars int
	// MaxResourceBytes is the largest file a resource read returns;
	// DefaultMaxResourceBytes when zero.
	MaxResourceBytes int64
	// SessionIdle closes an HTTP session that sent no request for this
	// long; DefaultSessionIdle when zero.
	SessionIdle time.Duration
	// MaxSessions is how many sessions may be open at once: a new session
	// past it closes the one idle longest. DefaultMaxSessions when zero.
	MaxSessions int
	// StampEvery is how long the server trusts the stamp it last read:
	// Workspace.Stamp is called at most once per StampEvery, so a change
	// is seen within that time. Zero calls Stamp on every request.
	StampEvery time.Duration
	// Env finds the user's git config, for what git ignores in a local
	// layer's skill, which is not served; the zero Env is the process's.
	Env hostenv.Env
}

// Server is an MCP server over one workspace. It is safe for concurrent
// use by any number of connections.
type Server struct {
	ws   Workspace
	opts Options
	log  *slog.Logger
	mcp  *sdk.Server

	// reload serializes catalog reads and the resource registrations that
	// follow them; snap is read without it.
	reload     sync.Mutex
	snap       atomic.Pointer[snapshot]
	started    time.Time
	stamped    atomic.Int64      // when Stamp was last read, since started
	registered map[string]string // resource URI -> description, under reload

	ledgers ledgers
	live    liveSessions
	// records are the uses and views being recorded after their
	// answers (record): Drain waits for them.
	records inFlight
}

// New returns a server over ws. It reads the catalog once, so a workspace
// that cannot be read fails here rather than in the first call.
func New(ctx context.Context, ws Workspace, opts Options) (*Server, error) {
	if opts.Name == "" {
		opts.Name = "skillsync"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.LedgerSize <= 0 {
		opts.LedgerSize = DefaultLedgerSize
	}
	if opts.MaxChars <= 0 {
		opts.MaxChars = DefaultMaxChars
	}
	if opts.MaxResourceBytes <= 0 {
		opts.MaxResourceBytes = DefaultMaxResourceBytes
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{ws: ws, opts: opts, log: log, registered: map[string]string{}, started: time.Now()}
	s.ledgers.m = map[*sdk.ServerSession]*ledger{}
	s.live.last = map[*sdk.ServerSession]time.Time{}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: opts.Name, Title: "Agent Skills from skillsync", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions})
	s.mcp.AddReceivingMiddleware(s.track, s.refresh)
	if err := s.addTools(); err != nil {
		return nil, err
	}
	s.addProposeTool()
	s.addResources()
	s.addPrompt()
	if _, err := s.current(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// loadedChars is how many characters of skills (names, descriptions
// and instructions) one loaded_skills answer gives back: room for the
// few skills a task follows, each at its limit, in a fraction of a
// context window (96,000 characters, some 25,000 tokens, by default),
// where the whole ledger at its limit was near a megabyte, twice over.
func (o Options) loadedChars() int {
	if o.MaxChars > math.MaxInt/4 {
		return math.MaxInt
	}
	return 4 * o.MaxChars
}

const instructions = `This server gives you the team's Agent Skills: folders of instructions, scripts and references for specific tasks.
Before a task a skill may cover, call search_skills (or list_skills), then load_skill to get its instructions and follow them.
Read the files a skill refers to with read_skill_file. A skill you loaded in this session is answered "already loaded";
after your context was compacted, loaded_skills gives you back the skills you loaded, the most recent first;
it names those that do not fit in its answer, and load_skill gives each of them again.`

// MCP returns the underlying SDK server, to connect it to a transport of
// the caller's choice.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Run serves one connection over t, such as &sdk.StdioTransport{}, until
// the client disconnects or ctx ends. A client that closes the connection
// is a normal end: Run returns nil, once every request it sent was
// answered.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	err := s.mcp.Run(ctx, drainTransport{t})
	// A use answered before it was recorded (the usage file was busy)
	// is recorded before the process exits, as the answers are sent,
	// whether the input ended or a signal ended ctx.
	s.Drain(context.WithoutCancel(ctx))
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// Drain returns once the uses and views of the answers sent are recorded,
// ctx ended, or drainWait passed. A use waits for the usage file's lock
// after its answer went out (another writer may hold it for minutes), and
// the process's exit would lose it. Run drains before it returns; a
// caller that serves Handler calls Drain once its http.Server has shut
// down. A signal that stops the server has ended its context: give
// Drain one without its cancel (context.WithoutCancel), which drainWait
// still bounds.
func (s *Server) Drain(ctx context.Context) {
	n, idle := s.records.idle()
	if n == 0 {
		return
	}
	s.log.Info("stopping: uses and views of skills answered before are still being recorded (the usage file is busy); waiting for them",
		"records", n, "at_most", drainWait)
	timer := time.NewTimer(drainWait)
	defer timer.Stop()
	select {
	case <-idle:
		return
	case <-ctx.Done():
	case <-timer.C:
	}
	if n, _ := s.records.idle(); n > 0 {
		s.log.Warn("stopped before every use and view of a skill was recorded: the usage file stayed busy; they are lost", "records", n)
	}
}

// Handler returns an http.Handler that serves MCP over streamable HTTP,
// one session per client. A session idle for SessionIdle is closed, and
// at most MaxSessions are open at once.
func (s *Server) Handler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp },
		&sdk.StreamableHTTPOptions{SessionTimeout: s.opts.SessionIdle})
}

// refresh makes sure every request that reads the catalog sees the current
// one, and hands it to the handler through the context.
func (s *Server) refresh(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/call", "resources/list", "resources/read", "prompts/get":
			snap, err := s.current(ctx)
			if err != nil {
				return nil, err
			}
			ctx = context.WithValue(ctx, snapshotKey{}, snap)
		}
		return next(ctx, method, req)
	}
}

type snapshotKey struct{}

// catalog returns the snapshot refresh put in ctx, or reads the current
// one.
func (s *Server) catalog(ctx context.Context) (*snapshot, error) {
	if snap, ok := ctx.Value(snapshotKey{}).(*snapshot); ok {
		return snap, nil
	}
	return s.current(ctx)
}

// current returns the catalog snapshot for the workspace's stamp now,
// reading the catalog again when the stamp moved. Within StampEvery of the
// last look it trusts the snapshot it has.
func (s *Server) current(ctx context.Context) (*snapshot, error) {
	old := s.snap.Load()
	if old != nil && s.opts.StampEvery > 0 && time.Since(s.started)-time.Duration(s.stamped.Load()) < s.opts.StampEvery {
		return old, nil
	}
	return s.look(ctx)
}

// look reads the stamp and, when it moved, the catalog. When the stamp or
// the catalog cannot be read, the last good snapshot goes on serving.
func (s *Server) look(ctx context.Context) (*snapshot, error) {
	old := s.snap.Load()
	s.stamped.Store(int64(time.Since(s.started)))
	stamp, err := s.ws.Stamp()
	if err != nil {
		if old != nil {
			s.log.Warn("cannot tell whether the catalog changed; serving the last one read", "err", err)
			return old, nil
		}
		return nil, fmt.Errorf("read the workspace's state: %w", err)
	}
	if old != nil && old.stamp == stamp {
		return old, nil
	}
	s.reload.Lock()
	defer s.reload.Unlock()
	if cur := s.snap.Load(); cur != nil && cur.stamp == stamp {
		return cur, nil
	}
	cat, err := s.ws.Catalog(ctx)
	if err != nil {
		if old != nil {
			s.log.Warn("cannot read the catalog again; serving the last one read", "err", err)
			return old, nil
		}
		return nil, fmt.Errorf("read the catalog: %w", err)
	}
	snap := newSnapshot(stamp, cat, s.opts.Env)
	s.snap.Store(snap)
	if s.registerResources(snap) && old != nil {
		// The prompt renders the same list: adding it again tells clients
		// (notifications/prompts/list_changed) to fetch it anew.
		s.addPrompt()
	}
	if old != nil {
		s.log.Info("catalog reloaded", "skills", len(snap.visible))
	}
	return snap, nil
}
