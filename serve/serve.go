// Package serve is skillsync's read-only web catalog: the winning skills
// with their usage, one page per skill (its SKILL.md rendered, its files,
// its provenance and a chart of its use), the sources and targets, what
// curation will do, the drafts waiting for a person, and the fleet.
//
// Skill content is untrusted: Markdown is rendered with raw HTML dropped
// and only http(s) and relative links kept, every page carries
// Content-Security-Policy: default-src 'self', and everything the pages
// use is served by the binary. No route writes: the server answers GET
// and HEAD only, and reads the workspace through a Backend.
package serve

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/httpserver"
	"github.com/skillsync/skillsync/layering"
)

// Backend is what the pages read. Every method only reads.
type Backend interface {
	// Catalog is the workspace's merged catalog, as list shows it.
	Catalog(ctx context.Context) (*layering.Catalog, error)
	// Usage is the workspace's usage and curation state.
	Usage(ctx context.Context) (*curator.Usage, error)
	// CopyOf is the copy a winner's usage is kept under.
	CopyOf(w *layering.Winner) (curator.Copy, bool)
	// Open opens a file of a skill, confined to the skill as the read
	// command confines it. What it refuses to open (a link out of the
	// skill, a FIFO) is an fs.ErrPermission.
	Open(ctx context.Context, name, file string) (fs.File, *layering.Winner, error)
	// Status is the state of the sources and targets.
	Status(ctx context.Context) (*Status, error)
	// Curation is the policy that decides stale and archived.
	Curation() Policy
	// Drafts are the drafts waiting for the promotion gate.
	Drafts(ctx context.Context) ([]Draft, error)
	// Fleet is the fleet's state, nil when no fleet is configured.
	Fleet(ctx context.Context) (*Fleet, error)
	// History is a copy's uses and views per day, from the workspace's
	// usage or, with a fleet, the fleet's.
	History(ctx context.Context, w *layering.Winner, since time.Time) ([]Day, error)
}

// Status is what the sources page shows.
type Status struct {
	Workspace string
	Sources   []SourceStatus
	Targets   []TargetStatus
}

// SourceStatus is one source.
type SourceStatus struct {
	Name, Kind, Revision string
	SyncedAt             time.Time
	// UpstreamMoved is what the last cheap check found; nil when none ran.
	UpstreamMoved *bool
	LastError     string
	Skills        int
}

// TargetStatus is one target folder.
type TargetStatus struct {
	Dir       string
	Skills    int
	Conflicts []string // copies waiting in .skillsync-conflicts/
}

// Policy is the curation policy in force.
type Policy struct {
	StaleAfter, ArchiveAfter time.Duration
}

// Draft is a draft waiting for the gate, with its diff against the skill
// it would replace ("" when it is new).
type Draft struct {
	Name, Description, Against, Diff string
	Problems                         []string
	ProposedAt                       time.Time
}

// Fleet is the fleet page's content.
type Fleet struct {
	Hosts []Host
	// Rollouts are the skills held back on some hosts, with how many
	// place them.
	Rollouts []Rollout
}

// Host is one host of the fleet.
type Host struct {
	ID, Environment, Version string
	LastSeen                 time.Time
	Sources                  []HostSource
}

// HostSource is one source of a host.
type HostSource struct {
	Source, Revision, Status, Error string
	Behind                          bool
}

// Rollout is a staged skill's coverage.
type Rollout struct {
	Skill, Percent, Environments string
	Placed, Hosts                int
}

// Day is one day's uses and views.
type Day struct {
	Date        time.Time
	Uses, Views int
}

// Options change a Server.
type Options struct {
	// Token, when set, is required of every request: as a bearer header,
	// or the cookie /login?token= sets. Loopback servers may leave it
	// empty.
	Token string
	// Hosts are the Host header values accepted besides loopback names;
	// a server on another address adds its own.
	Hosts []string
	// Logger receives pages that failed. nil discards.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

//go:embed templates/*.html assets/*
var files embed.FS

// Server serves the catalog.
type Server struct {
	b     Backend
	opts  Options
	log   *slog.Logger
	pages *template.Template
	mux   *http.ServeMux
	// bodies are the skills' bodies rendered, kept for the next view.
	bodies *bodies
}

// New returns a server over b.
func New(b Backend, opts Options) (*Server, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pages, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("serve: parse templates: %w", err)
	}
	s := &Server{b: b, opts: opts, log: log, pages: pages, mux: http.NewServeMux(), bodies: newBodies(maxBodies)}
	assets, _ := fs.Sub(files, "assets")
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	s.mux.HandleFunc("GET /{$}", s.catalog)
	s.mux.HandleFunc("GET /skills/{name}", s.skill)
	s.mux.HandleFunc("GET /skills/{name}/files/{path...}", s.file)
	s.mux.HandleFunc("GET /sources", s.sources)
	s.mux.HandleFunc("GET /curation", s.curation)
	s.mux.HandleFunc("GET /drafts", s.drafts)
	s.mux.HandleFunc("GET /fleet", s.fleet)
	s.mux.HandleFunc("GET /login", s.login)
	return s, nil
}

// Handler returns the server's handler: the pages behind the Host check,
// the refusal of other sites' subresource requests, the token and the
// security headers.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the catalog is read-only", http.StatusMethodNotAllowed)
			return
		}
		if s.opts.Token == "" && !s.hostAllowed(r.Host) {
			// A page of another site that resolves its name to 127.0.0.1
			// (DNS rebinding) must not read the catalog. With a token,
			// every request proves itself, whatever name it came by (a
			// server on 0.0.0.0 is reached by names it cannot know).
			http.Error(w, "host "+r.Host+" is not served here", http.StatusForbidden)
			return
		}
		if crossSiteSubresource(r) {
			http.Error(w, "another site's page asked for this as part of itself (Sec-Fetch-Site: cross-site): "+
				"the catalog answers other sites only when a link to it is followed; open the address itself", http.StatusForbidden)
			return
		}
		if s.opts.Token != "" {
			// What a token guards is not for shared caches, nor for the
			// browser's once the token is gone.
			h.Set("Cache-Control", "no-store")
		}
		if !s.authorized(r) {
			http.Error(w, "a token is needed: open /login?token=... or send Authorization: Bearer ...", http.StatusUnauthorized)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// crossSiteSubresource tells, by the Fetch Metadata browsers send,
// whether r is what a page of another site asked for as part of itself
// (an <img>, a script, a fetch, a frame), not a navigation to a page
// (a link followed, an address typed). Such a request has the loopback
// Host of the catalog's own address, so the Host check lets it through,
// and its only effect would be the work of the page: a page anywhere on
// the web could have its visitors' browsers render skills again and
// again. Same-origin and same-site requests, a typed address ("none"),
// and requests without the headers (curl, older browsers) pass.
func crossSiteSubresource(r *http.Request) bool {
	h := r.Header
	return strings.EqualFold(h.Get("Sec-Fetch-Site"), "cross-site") &&
		(!strings.EqualFold(h.Get("Sec-Fetch-Mode"), "navigate") || !strings.EqualFold(h.Get("Sec-Fetch-Dest"), "document"))
}

// hostAllowed accepts loopback names and the hosts Options adds.
func (s *Server) hostAllowed(hostport string) bool {
	if httpserver.LoopbackHost(hostport) {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	for _, h := range s.opts.Hosts {
		if strings.EqualFold(h, host) || strings.EqualFold(h, hostport) {
			return true
		}
	}
	return false
}

const cookieName = "skillsync_serve"

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" || r.URL.Path == "/login" {
		return true
	}
	// The scheme's name is case-insensitive (RFC 9110, section 11.1).
	if scheme, bearer, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") && s.tokenIs(bearer) {
		return true
	}
	c, err := r.Cookie(cookieName)
	return err == nil && s.tokenIs(c.Value)
}

func (s *Server) tokenIs(v string) bool {
	return subtle.ConstantTimeCompare([]byte(v), []byte(s.opts.Token)) == 1
}

// login sets the token cookie and sends the browser to the catalog, so
// the token leaves the address bar.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.opts.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !s.tokenIs(r.URL.Query().Get("token")) {
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// render writes a page, or a 500 that names what failed.
func (s *Server) render(w http.ResponseWriter, page string, data any) {
	var b strings.Builder
	if err := s.pages.ExecuteTemplate(&b, page, data); err != nil {
		s.fail(w, "render "+page, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	// Written as built: a page is held until its client has read it, so
	// it is held once, not copied again on the way out.
	io.WriteString(w, b.String())
}

func (s *Server) fail(w http.ResponseWriter, what string, err error) {
	s.log.Warn("page failed", "what", what, "err", err)
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		code = http.StatusNotFound
	case errors.Is(err, fs.ErrPermission):
		code = http.StatusForbidden
	}
	http.Error(w, what+": "+err.Error(), code)
}
