package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// HTTPServer serves the repositories under one directory over git's smart
// HTTP protocol, with basic auth when a password is set.
type HTTPServer struct {
	URL string // base URL; a repository is URL + "/" + its directory name
	// UploadPacks counts POSTs to git-upload-pack: each is a fetch that
	// asked for objects. Listing refs alone does not count.
	UploadPacks atomic.Int64
	// Requests counts every request.
	Requests atomic.Int64
	// FailNext makes that many next requests fail with 503, as an
	// overloaded server does, to test retries.
	FailNext atomic.Int64
}

// ServeHTTP serves root over smart HTTP on 127.0.0.1 until the test ends.
// With a non-empty password every request needs basic auth as user.
func ServeHTTP(t testing.TB, root, user, password string) *HTTPServer {
	t.Helper()
	return ServeHTTPEnv(t, root, user, password)
}

// ServeHTTPEnv is ServeHTTP with env added to git http-backend's
// environment: GIT_CONFIG_COUNT/KEY_n/VALUE_n set protected config such
// as uploadpack.packObjectsHook, to make the server misbehave.
func ServeHTTPEnv(t testing.TB, root, user, password string, env ...string) *HTTPServer {
	t.Helper()
	backend, err := execPath()
	if err != nil {
		t.Skipf("git --exec-path: %v", err)
	}
	s := &HTTPServer{}
	h := &cgi.Handler{
		Path: filepath.Join(backend, "git-http-backend"),
		Env:  append([]string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, env...),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		if s.FailNext.Load() > 0 {
			s.FailNext.Add(-1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		if password != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			s.UploadPacks.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// execPath returns where git keeps its programs, asked once per test
// binary: a process for each server started was a process for each
// test that serves over HTTP.
var execPath = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	return strings.TrimSpace(string(out)), err
})
