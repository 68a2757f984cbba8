package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	wsfiles "github.com/skillsync/skillsync/workspace"
)

var serveLine = regexp.MustCompile(`skillsync serve: (http://127\.0\.0\.1:\d+)/`)

// TestServe runs the web catalog over a synced workspace: the catalog,
// a skill page, the sources, and no route that writes.
func TestServe(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	if r := run(t, ws, "sync"); r.code != 0 && r.code != 3 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	if r := run(t, ws, "use", "release-notes"); r.code != 0 {
		t.Fatalf("use: %d\n%s", r.code, r.stderr)
	}
	// What the daemon found of the source, as it writes it: the sources
	// page shows its last success and its last error, as status does.
	state := `{"pid": 1, "sources": {"builtin": {"last_attempt": "2026-03-02T10:00:00Z",
		"last_success": "2026-03-01T09:30:00Z", "last_error": "fetch: the remote hung up", "fetch_seconds": 0}},
		"updated_at": "2026-03-02T10:00:00Z"}`
	if err := os.WriteFile(filepath.Join(ws, "skills", wsfiles.DaemonName), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, ws, serveLine, "serve", "--listen", "127.0.0.1:0")
	get := func(p string) (int, string) {
		t.Helper()
		res, err := http.Get(addr + p)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	for p, want := range map[string][]string{
		"/":                     {">release-notes</a>", ">skillsync</a>"},
		"/skills/release-notes": {"<h1>release-notes</h1>", `<svg class="chart"`, "1 uses and 0 views in all"},
		"/sources":              {"builtin", "2026-03-01 09:30 UTC", "fetch: the remote hung up"},
		"/curation":             {"Curation"},
		"/drafts":               {"No draft waits."},
		"/skills/nope":          nil,
	} {
		code, body := get(p)
		if want == nil {
			if code != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", p, code)
			}
			continue
		}
		if code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p, code, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q", p, w)
			}
		}
	}
	// A daemon state that does not parse hides the daemon's view, not
	// the sources.
	if err := os.WriteFile(filepath.Join(ws, "skills", wsfiles.DaemonName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := get("/sources"); code != http.StatusOK || !strings.Contains(body, "builtin") || !strings.Contains(body, "read daemon state") {
		t.Errorf("/sources with a broken daemon state: %d\n%s", code, body)
	}
	res, err := http.Post(addr+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", res.StatusCode)
	}
}

func TestServeNeedsATokenOffLoopback(t *testing.T) {
	t.Parallel()
	r := run(t, t.TempDir(), "serve", "--listen", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.stderr, "SKILLSYNC_SERVE_TOKEN") {
		t.Errorf("serve on 0.0.0.0 without a token: exit %d\n%s", r.code, r.stderr)
	}
}

// TestServeReadsTheConfigAgain: an edit of skillsync.yaml while the
// server runs is served at the next request, as the daemon reloads its
// own: a skill hidden leaves the catalog and its page; a config that no
// longer loads keeps the one before, and one that loads again is read.
// Before, the config read at the start held until a restart.
func TestServeReadsTheConfigAgain(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	if r := run(t, ws, "sync"); r.code != 0 && r.code != 3 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	addr := startServer(t, ws, serveLine, "serve", "--listen", "127.0.0.1:0")
	get := func(p string) (int, string) {
		t.Helper()
		res, err := http.Get(addr + p)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if code, body := get("/"); code != http.StatusOK || !strings.Contains(body, ">release-notes</a>") {
		t.Fatalf("GET / before the edit: %d, release-notes listed %v", code, strings.Contains(body, ">release-notes</a>"))
	}
	path := filepath.Join(ws, "skillsync.yaml")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hidden := strings.Replace(string(text), "hidden: [hidden-one]", "hidden: [hidden-one, release-notes]", 1)
	if hidden == string(text) {
		t.Fatal("the test workspace's config has no hidden: line to edit")
	}
	edit(hidden)
	if _, body := get("/"); strings.Contains(body, ">release-notes</a>") {
		t.Error("a skill the edited config hides is still listed")
	}
	if code, _ := get("/skills/release-notes"); code != http.StatusNotFound {
		t.Errorf("GET /skills/release-notes of a skill hidden: %d, want 404", code)
	}
	edit(hidden + "\nrepositories: [\n")
	if code, body := get("/"); code != http.StatusOK || strings.Contains(body, ">release-notes</a>") || !strings.Contains(body, ">skillsync</a>") {
		t.Errorf("GET / with a config that does not load: %d, want the config before it", code)
	}
	edit(string(text))
	if _, body := get("/"); !strings.Contains(body, ">release-notes</a>") {
		t.Error("a skill the config no longer hides is not listed again")
	}
}
