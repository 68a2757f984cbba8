package serve

import (
	"context"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/skill"
)

// now is the tests' clock.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// dirBackend is a Backend over one folder of skills read in place, as the
// workspace layer is, with a real usage store: real files, real discovery,
// real records.
type dirBackend struct {
	dir    string
	store  *curator.Store
	drafts []Draft
	fleet  *Fleet
	hidden []string // the config's hidden:
}

func newDirBackend(t testing.TB) *dirBackend {
	dir := t.TempDir()
	return &dirBackend{dir: filepath.Join(dir, "skills"), store: curator.NewStore(filepath.Join(dir, "skills"))}
}

func (d *dirBackend) Catalog(ctx context.Context) (*layering.Catalog, error) {
	skills, problems, err := dirsource.NewLocal("workspace", d.dir, repository.Options{}).Skills(ctx)
	if err != nil {
		return nil, err
	}
	cat := layering.Build([]layering.Input{{
		Layer: layering.Workspace, Source: "workspace", Skills: skills,
		Dir: func(s skill.Skill) string { return filepath.Join(d.dir, filepath.FromSlash(s.Path)) },
	}}, layering.Options{Hidden: d.hidden})
	cat.Problems = append(cat.Problems, problems...)
	u, err := d.store.Load()
	if err != nil {
		return nil, err
	}
	for _, w := range cat.Winners {
		if c, ok := d.CopyOf(w); ok && u.Skills[c] != nil {
			w.State = string(u.Skills[c].State)
		}
	}
	return cat, nil
}

func (d *dirBackend) Usage(context.Context) (*curator.Usage, error) { return d.store.Load() }

func (d *dirBackend) CopyOf(w *layering.Winner) (curator.Copy, bool) {
	c, err := curator.NewCopy(w.Layer, "", w.Skill.Name)
	return c, err == nil
}

func (d *dirBackend) Open(ctx context.Context, name, file string) (fs.File, *layering.Winner, error) {
	cat, err := d.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	return openIn(cat, name, file)
}

// openIn opens a file of a skill of cat, confined to the skill.
func openIn(cat *layering.Catalog, name, file string) (fs.File, *layering.Winner, error) {
	w, ok := cat.Lookup(name)
	if !ok || w.Hidden { // as the engine's read refuses a hidden skill
		return nil, nil, fmt.Errorf("no skill named %s: %w", name, fs.ErrNotExist)
	}
	// As the read command opens it, confinement and errors alike.
	f, err := repository.OpenSkillFile(name, file, w.Dir, nil)
	return f, w, err
}

func (d *dirBackend) Status(context.Context) (*Status, error) {
	return &Status{Workspace: d.dir, Sources: []SourceStatus{{Name: "team", Kind: "git", Revision: "0123456789abcdef0123", SyncedAt: now, LastError: "fetch: connection refused"}}}, nil
}

func (d *dirBackend) Curation() Policy {
	return Policy{StaleAfter: 30 * 24 * time.Hour, ArchiveAfter: 90 * 24 * time.Hour}
}

func (d *dirBackend) Drafts(context.Context) ([]Draft, error) { return d.drafts, nil }

func (d *dirBackend) Fleet(context.Context) (*Fleet, error) { return d.fleet, nil }

func (d *dirBackend) History(_ context.Context, w *layering.Winner, since time.Time) ([]Day, error) {
	u, err := d.store.Load()
	if err != nil {
		return nil, err
	}
	c, _ := d.CopyOf(w)
	return DaysOf(u.Skills[c], since), nil
}

// writeSkill writes <dir>/<name>/SKILL.md with body, and files.
func (d *dirBackend) writeSkill(t testing.TB, name, description, body string, files map[string]string) {
	t.Helper()
	all := map[string]string{"SKILL.md": fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s", name, description, body)}
	for k, v := range files {
		all[k] = v
	}
	skilltest.Write(t, filepath.Join(d.dir, name), all)
}

func (d *dirBackend) use(t testing.TB, name string, at time.Time, view bool) {
	t.Helper()
	c, err := curator.NewCopy(layering.Workspace, "", name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.store.Record(context.Background(), curator.Use{Copy: c, View: view, From: curator.FromCLI, At: at}); err != nil {
		t.Fatal(err)
	}
}

// hostileBody is a skill body that tries to run script in every way
// Markdown lets one try.
const hostileBody = `# Evil

<script>document.title = "pwned-script"</script>

<img src=x onerror="document.title='pwned-img'">

[click me](javascript:document.title='pwned-link')

[data](data:text/html,<script>alert(1)</script>)

<a href="javascript:alert(1)">raw link</a>

[fine](https://example.com/docs) and [relative](references/guide.md)
`

// fixture is a workspace of a few skills with usage, one hostile.
func fixture(t testing.TB) *dirBackend {
	d := newDirBackend(t)
	d.writeSkill(t, "pdf", "Extract text and tables from PDF files", "# PDF\n\nRun `scripts/extract.py FILE`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
		map[string]string{"scripts/extract.py": "print('extract')\n", "assets/logo.png": "\x89PNG\r\n\x1a\n\x00\x00"})
	d.writeSkill(t, "docx", "Write Word documents", "# DOCX\n", nil)
	d.writeSkill(t, "release-notes", "Draft release notes from git history", "# Release notes\n", nil)
	d.writeSkill(t, "evil", "A skill whose body tries to run script", hostileBody, nil)
	for i := range 5 {
		d.use(t, "pdf", now.AddDate(0, 0, -7*i), false)
	}
	d.use(t, "pdf", now.AddDate(0, 0, -1), true)
	d.use(t, "docx", now.AddDate(0, 0, -60), false)
	return d
}

func newServer(t testing.TB, b Backend, opts Options) *httptest.Server {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return now }
	}
	s, err := New(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func get(t testing.TB, url string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(body)
}

func TestPages(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	b.drafts = []Draft{{Name: "pdf", Description: "Better PDFs", Against: "workspace/pdf",
		Diff: "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1 +1 @@\n-# PDF\n+# PDF, better\n"}}
	srv := newServer(t, b, Options{})
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/", []string{">pdf</a>", "Extract text and tables", "release-notes", `<td class="num">5</td>`, `<td class="num">0</td>`}},
		{"/?q=release", []string{"release-notes"}},
		{"/?layer=workspace&state=active", []string{"pdf", "docx"}},
		{"/skills/pdf", []string{"<h1>pdf</h1>", "<table>", "<code>scripts/extract.py FILE</code>", "scripts/extract.py", "<svg class=\"chart\"", "5 uses and 1 views in all"}},
		{"/skills/pdf/files/scripts/extract.py", []string{"print(&#39;extract&#39;)"}},
		{"/skills/pdf/files/assets/logo.png", []string{"a binary file"}},
		{"/sources", []string{"team", "0123456789ab", "connection refused", "no target"}},
		{"/curation", []string{"Curation", "docx", "idle for 30 days"}},
		{"/drafts", []string{"skillsync promote pdf", "skillsync reject pdf", `<span class="add">&#43;# PDF, better</span>`}},
		{"/fleet", []string{"No fleet is configured"}},
	} {
		code, h, body := get(t, srv.URL+c.path)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", c.path, code, body)
			continue
		}
		if csp := h.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", c.path, csp)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in\n%s", c.path, w, body)
			}
		}
	}
	if _, _, body := get(t, srv.URL+"/?q=release"); strings.Contains(body, ">pdf</a>") {
		t.Error("a search for release lists pdf")
	}
}

func TestFleetPage(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	b.fleet = &Fleet{Hosts: []Host{
		{ID: "ci-runner-7", Environment: "prod", Version: "1.4.0", LastSeen: now,
			Sources: []HostSource{{Source: "team", Revision: "0123456789abcdef", Status: "updated"}}},
		{ID: "laptop-9", Environment: "dev", Version: "1.3.0", LastSeen: now.Add(-3 * time.Hour),
			Sources: []HostSource{{Source: "team", Revision: "fedcba9876543210", Status: "failed", Error: "fetch: timeout", Behind: true}}},
	}, Rollouts: []Rollout{{Skill: "pdf", Percent: "10%", Environments: "prod", Placed: 1, Hosts: 2}}}
	srv := newServer(t, b, Options{})
	code, _, body := get(t, srv.URL+"/fleet")
	for _, want := range []string{"ci-runner-7", "prod", "0123456789ab", "laptop-9", "(behind)", "fetch: timeout", "1 of 2"} {
		if !strings.Contains(body, want) {
			t.Errorf("fleet page (%d) lacks %q", code, want)
		}
	}
}

func TestUntrustedMarkdownRunsNothing(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fixture(t), Options{})
	_, _, body := get(t, srv.URL+"/skills/evil")
	article := body[strings.Index(body, `<article`):strings.Index(body, `</article>`)]
	for _, bad := range []string{"<script", "onerror", "javascript:", "data:text/html"} {
		if strings.Contains(strings.ToLower(article), bad) {
			t.Errorf("the rendered body keeps %q:\n%s", bad, article)
		}
	}
	// A relative link is the skill's own file, not a page beside /skills.
	for _, good := range []string{`href="https://example.com/docs"`, `href="/skills/evil/files/references/guide.md"`} {
		if !strings.Contains(article, good) {
			t.Errorf("the rendered body lost %s:\n%s", good, article)
		}
	}
}

func TestReadOnlyAndConfined(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	if err := os.WriteFile(filepath.Join(filepath.Dir(b.dir), "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(b.dir), "secret.txt"), filepath.Join(b.dir, "pdf", "link.txt")); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, b, Options{})
	for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		req, _ := http.NewRequest(method, srv.URL+"/", strings.NewReader("x"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /: %d, want 405", method, res.StatusCode)
		}
	}
	for _, p := range []string{"/skills/pdf/files/../../secret.txt", "/skills/pdf/files/%2e%2e/%2e%2e/secret.txt", "/skills/pdf/files/link.txt", "/skills/nope"} {
		code, _, body := get(t, srv.URL+p)
		if code == http.StatusOK || strings.Contains(body, "secret") && !strings.Contains(body, "secret.txt") {
			t.Errorf("GET %s: %d\n%s", p, code, body)
		}
	}
	// A refusal is a 403 and a file not there a 404, not a failure.
	for p, want := range map[string]int{"/skills/pdf/files/link.txt": http.StatusForbidden, "/skills/pdf/files/nosuch": http.StatusNotFound,
		"/skills/pdf/files/SKILL.md%00":          http.StatusNotFound,
		"/skills/pdf/files/..%2f..%2fsecret.txt": http.StatusForbidden, "/skills/nope": http.StatusNotFound} {
		if code, _, body := get(t, srv.URL+p); code != want {
			t.Errorf("GET %s: %d, want %d\n%s", p, code, want, body)
		}
	}
}

func TestHostAndToken(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	open := newServer(t, b, Options{})
	if code, _, _ := get(t, open.URL+"/", "Host", "evil.example:80"); code != http.StatusForbidden {
		t.Errorf("a foreign Host header: %d, want 403", code)
	}
	if code, _, _ := get(t, open.URL+"/", "Host", "localhost:8080"); code != http.StatusOK {
		t.Errorf("Host localhost: %d", code)
	}

	locked := newServer(t, b, Options{Token: "s3cret", Hosts: []string{"catalog.internal"}})
	if code, _, _ := get(t, locked.URL+"/"); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _, _ := get(t, locked.URL+"/", "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d, want 401", code)
	}
	if code, h, _ := get(t, locked.URL+"/", "Authorization", "Bearer s3cret", "Host", "catalog.internal"); code != http.StatusOK || h.Get("Cache-Control") != "no-store" {
		t.Errorf("the bearer token on the named host: %d, Cache-Control %q", code, h.Get("Cache-Control"))
	}
	if code, _, _ := get(t, locked.URL+"/", "Authorization", "bearer s3cret", "Host", "catalog.internal"); code != http.StatusOK {
		t.Errorf("the scheme in lower case: %d", code)
	}
	// A server on 0.0.0.0 is reached by names and addresses it cannot
	// know: with the token, any of them is served; without, none.
	if code, _, _ := get(t, locked.URL+"/", "Authorization", "Bearer s3cret", "Host", "192.0.2.2:8080"); code != http.StatusOK {
		t.Errorf("the bearer token by another address: %d", code)
	}
	if code, _, _ := get(t, locked.URL+"/", "Host", "192.0.2.2:8080"); code != http.StatusUnauthorized {
		t.Errorf("no token by another address: %d, want 401", code)
	}
	// /login sets a cookie that later requests carry.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(locked.URL + "/login?token=s3cret")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookies := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly {
		t.Fatalf("login: %d, cookies %v", res.StatusCode, cookies)
	}
	req, _ := http.NewRequest("GET", locked.URL+"/sources", nil)
	req.AddCookie(cookies[0])
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: %d", res.StatusCode)
	}
	if code, _, _ := get(t, locked.URL+"/login?token=nope"); code != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %d", code)
	}
}

func TestChartCountsWeeks(t *testing.T) {
	t.Parallel()
	start := weekStart(now).AddDate(0, 0, -7*(weeks-1))
	svg := string(chart([]Day{
		{Date: now, Uses: 3, Views: 1},
		{Date: now.AddDate(0, 0, -1), Uses: 2},
		{Date: start.AddDate(0, 0, -1), Uses: 99}, // before the window
	}, start, weeks))
	if strings.Count(svg, "<rect") != 2*weeks {
		t.Errorf("%d bars, want %d", strings.Count(svg, "<rect"), 2*weeks)
	}
	if !strings.Contains(svg, "week of 30 Nov: 5 uses") || !strings.Contains(svg, "week of 30 Nov: 1 views") || strings.Contains(svg, "99") {
		t.Errorf("chart:\n%s", svg)
	}
}

// TestLinksReachTheirPages: every link a page makes opens the page it
// names, for names and paths with characters a URL gives a meaning ('#',
// '?', '%', a space), and a skill's relative links open its files.
func TestLinksReachTheirPages(t *testing.T) {
	t.Parallel()
	d := newDirBackend(t)
	d.writeSkill(t, "a#b", "A name with a hash", "See [the guide](references/guide%20one.md), [q](q%3Fx.md), [up](../a%23b/SKILL.md) and [out](../../etc).\n",
		map[string]string{"references/guide one.md": "guide\n", "q?x.md": "q\n", "100%.md": "pct\n"})
	srv := newServer(t, d, Options{})
	hrefs := func(body string) []string {
		var out []string
		for _, part := range strings.Split(body, `href="`)[1:] {
			h := html.UnescapeString(part[:strings.Index(part, `"`)])
			if strings.HasPrefix(h, "/skills/") {
				out = append(out, h)
			}
		}
		return out
	}
	_, _, catalog := get(t, srv.URL+"/")
	_, _, page := get(t, srv.URL+"/skills/a%23b")
	links := append(hrefs(catalog), hrefs(page)...)
	for _, want := range []string{"/skills/a%23b", "/skills/a%23b/files/references/guide%20one.md", "/skills/a%23b/files/q%3Fx.md", "/skills/a%23b/files/100%25.md"} {
		if !slices.Contains(links, want) {
			t.Errorf("no link %s among %q", want, links)
		}
	}
	if strings.Contains(page, `href="/skills/etc"`) || strings.Contains(page, `href="/etc"`) {
		t.Errorf("a link out of the skill was taken to another page: %q", links)
	}
	for _, link := range links {
		if code, _, body := get(t, srv.URL+link); code != http.StatusOK {
			t.Errorf("%s: %d %s", link, code, body)
		}
	}
}

// TestFilePagesOfFolders: a folder of a skill is no file page (404), and
// the skill's files/ folder is its page.
func TestFilePagesOfFolders(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fixture(t), Options{})
	if code, _, body := get(t, srv.URL+"/skills/pdf/files/scripts"); code != http.StatusNotFound || !strings.Contains(body, "is a directory") {
		t.Errorf("a folder's file page: %d %s", code, body)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/skills/pdf/files/"} {
		resp, err := client.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/skills/pdf" {
			t.Errorf("%s: %d to %q", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

// A page of another site that embeds or fetches the catalog (an <img>
// pointing at a skill's page, a script, a fetch, a frame) is refused by
// the Fetch Metadata its browser sends, before anything is rendered;
// following a link from another site, typing the address, the catalog's
// own requests and clients that send no such headers are served.
func TestCrossSiteSubresourcesRefused(t *testing.T) {
	t.Parallel()
	srv, renders := countingServer(t, fixture(t), nil)
	locked := newServer(t, fixture(t), Options{Token: "s3cret"})
	// What <img src="http://127.0.0.1:PORT/skills/evil"> on another
	// site sends: refused before the body is rendered.
	if code, _, _ := get(t, srv.URL+"/skills/evil", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"); code != http.StatusForbidden || renders.Load() != 0 {
		t.Errorf("another site's image: %d, %d renderings", code, renders.Load())
	}
	for _, c := range []struct {
		name, site, mode, dest string
		want                   int
	}{
		{"curl", "", "", "", http.StatusOK},
		{"typed address", "none", "navigate", "document", http.StatusOK},
		{"link from another site", "cross-site", "navigate", "document", http.StatusOK},
		{"the search box's fetch", "same-origin", "cors", "empty", http.StatusOK},
		{"a same-site image", "same-site", "no-cors", "image", http.StatusOK},
		{"another site's image", "cross-site", "no-cors", "image", http.StatusForbidden},
		{"another site's fetch", "cross-site", "cors", "empty", http.StatusForbidden},
		{"another site's no-cors fetch", "cross-site", "no-cors", "empty", http.StatusForbidden},
		{"another site's script", "cross-site", "no-cors", "script", http.StatusForbidden},
		{"another site's frame", "cross-site", "navigate", "iframe", http.StatusForbidden},
		{"another site's style sheet", "Cross-Site", "no-cors", "style", http.StatusForbidden},
		{"cross-site and nothing more", "cross-site", "", "", http.StatusForbidden},
	} {
		var header []string
		for _, h := range [][2]string{{"Sec-Fetch-Site", c.site}, {"Sec-Fetch-Mode", c.mode}, {"Sec-Fetch-Dest", c.dest}} {
			if h[1] != "" {
				header = append(header, h[0], h[1])
			}
		}
		for _, p := range []string{"/skills/evil", "/", "/assets/style.css"} {
			code, _, body := get(t, srv.URL+p, header...)
			if code != c.want {
				t.Errorf("%s, GET %s: %d, want %d\n%s", c.name, p, code, c.want, body)
			}
			if code == http.StatusForbidden && !strings.Contains(body, "open the address itself") {
				t.Errorf("%s: the refusal does not say why: %s", c.name, body)
			}
		}
		// A token does not make another site's image welcome.
		if code, _, _ := get(t, locked.URL+"/skills/evil", append(header, "Authorization", "Bearer s3cret")...); code != c.want {
			t.Errorf("%s, with the token: %d, want %d", c.name, code, c.want)
		}
	}
}

// The line under a draft's name leaves out what the draft lacks, not
// just its value: an empty description leaves no ", proposed".
func TestDraftSummary(t *testing.T) {
	t.Parallel()
	at := now.Add(-time.Hour)
	cases := []struct {
		draft Draft
		want  string
	}{
		{Draft{Name: "a", Description: "Better PDFs", Against: "workspace/pdf", ProposedAt: at}, "Better PDFs, proposed 2026-12-01 11:00 UTC; replaces workspace/pdf"},
		{Draft{Name: "b", Description: "Better PDFs", Against: "workspace/pdf"}, "Better PDFs; replaces workspace/pdf"},
		{Draft{Name: "c", Description: "A new one", ProposedAt: at}, "A new one, proposed 2026-12-01 11:00 UTC; a new skill"},
		{Draft{Name: "d", Against: "workspace/pdf", ProposedAt: at}, "Proposed 2026-12-01 11:00 UTC; replaces workspace/pdf"},
		{Draft{Name: "e", Description: "  ", ProposedAt: at}, "Proposed 2026-12-01 11:00 UTC; a new skill"},
		{Draft{Name: "f", Against: "team/pdf"}, "Replaces team/pdf"},
		{Draft{Name: "g"}, "A new skill"},
		{Draft{Name: "h", Description: "<b>bold</b> & co"}, "&lt;b&gt;bold&lt;/b&gt; &amp; co; a new skill"},
	}
	b := fixture(t)
	for _, c := range cases {
		b.drafts = append(b.drafts, c.draft)
	}
	srv := newServer(t, b, Options{})
	code, _, page := get(t, srv.URL+"/drafts")
	if code != http.StatusOK {
		t.Fatalf("/drafts: %d\n%s", code, page)
	}
	for _, c := range cases {
		section := page[strings.Index(page, `id="draft-`+c.draft.Name+`"`):]
		section = section[:strings.Index(section, "</section>")]
		if !strings.Contains(section, "<p>"+c.want+"</p>") {
			t.Errorf("draft %s: no <p>%s</p> in\n%s", c.draft.Name, c.want, section)
		}
	}
	for _, bad := range []string{"<p>,", "<p>;", "<p> "} {
		if strings.Contains(page, bad) {
			t.Errorf("the drafts page has %q", bad)
		}
	}
}

// A skill the config hides is on no page: not the catalog, not its own,
// and not the curation page either, idle and pinned as it may be.
func TestHiddenSkillOnNoPage(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	b.hidden = []string{"docx", "pdf"}
	c, err := curator.NewCopy(layering.Workspace, "", "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Pin(context.Background(), c, true, "test", now); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, b, Options{})
	for _, p := range []string{"/", "/curation"} {
		code, _, body := get(t, srv.URL+p)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", p, code)
		}
		for _, name := range b.hidden {
			if strings.Contains(body, "/skills/"+name) {
				t.Errorf("GET %s shows the hidden skill %s:\n%s", p, name, body)
			}
		}
	}
	if code, _, _ := get(t, srv.URL+"/skills/docx"); code != http.StatusNotFound {
		t.Errorf("GET /skills/docx: %d, want 404", code)
	}
}
