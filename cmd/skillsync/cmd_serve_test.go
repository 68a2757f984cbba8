package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"

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
	// What a running daemon found of the source, as it writes it, later
	// than the sync by hand: the sources page shows its last success and
	// its last error, as status does.
	state := `{"pid": 1, "sources": {"builtin": {"last_attempt": "2099-03-02T10:00:00Z",
		"last_success": "2099-03-01T09:30:00Z", "last_error": "fetch: the remote hung up", "fetch_seconds": 0}},
		"updated_at": "2099-03-02T10:00:00Z"}`
	if err := os.WriteFile(filepath.Join(ws, "skills", wsfiles.DaemonName), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := flock.Acquire(context.Background(), filepath.Join(ws, "skills", wsfiles.DaemonLockName), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
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
		"/sources":              {"builtin", "2099-03-01 09:30 UTC", "fetch: the remote hung up"},
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

// TestServeSourcesAsStatus: the sources page weighs the daemon's state
// and the syncs by hand as skillsync status does. A daemon that recorded
// an error and stopped, then a sync by hand that succeeded: no error, and
// the sync's time; no daemon ever: the sync's time. Before, the page read
// the daemon's state alone, showing the old error in the first case and
// "-" in the second, while status said the source synced.
func TestServeSourcesAsStatus(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	if r := run(t, ws, "sync"); r.code != 0 && r.code != 3 {
		t.Fatalf("sync: %d\n%s", r.code, r.stderr)
	}
	addr := startServer(t, ws, serveLine, "serve", "--listen", "127.0.0.1:0")
	sources := func() string {
		t.Helper()
		res, err := http.Get(addr + "/sources")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return string(body)
	}
	synced := func() string {
		t.Helper()
		r := run(t, ws, "status", "--json")
		var st struct {
			Sources []struct {
				Name     string     `json:"name"`
				SyncedAt *time.Time `json:"synced_at"`
				Error    string     `json:"error"`
			} `json:"sources"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("status --json: %v\n%s\n%s", err, r.stdout, r.stderr)
		}
		for _, s := range st.Sources {
			if s.Name == "builtin" && s.SyncedAt != nil && s.Error == "" {
				return s.SyncedAt.UTC().Format("2006-01-02 15:04 UTC")
			}
		}
		t.Fatalf("status --json says builtin did not sync:\n%s", r.stdout)
		return ""
	}
	if body, want := sources(), synced(); !strings.Contains(body, want) {
		t.Errorf("/sources without a daemon ever: no %q, as status says\n%s", want, body)
	}
	state := `{"pid": 1, "sources": {"builtin": {"last_attempt": "2026-03-02T10:00:00Z",
		"last_success": "2026-03-01T09:30:00Z", "last_error": "fetch: the remote hung up", "fetch_seconds": 0}},
		"updated_at": "2026-03-02T10:00:00Z"}`
	if err := os.WriteFile(filepath.Join(ws, "skills", wsfiles.DaemonName), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	body, want := sources(), synced()
	if !strings.Contains(body, want) || strings.Contains(body, "the remote hung up") {
		t.Errorf("/sources after a stopped daemon's error and a sync by hand: want %q and no error, as status says\n%s", want, body)
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
