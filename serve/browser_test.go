package serve

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds Debian's headless Chromium, or skips the test saying how
// to install it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("SKILLSYNC_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: install it (Debian: apt-get install chromium) or set SKILLSYNC_CHROMIUM to its path")
	return ""
}

// browser starts a headless Chromium for one test, with the flags this
// machine's closed network needs, and a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// screenshot keeps a full-page PNG of what the browser shows in the
// test's artifact folder (under -outputdir with -artifacts).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// rowNames is the names the catalog's table shows, in order.
const rowNames = `Array.from(document.querySelectorAll('#rows tr.skill')).map(r => r.dataset.name)`

func TestBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	b := fixture(t)
	b.drafts = []Draft{{Name: "pdf", Description: "Better PDFs", Against: "workspace/pdf",
		Diff: "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1 +1 @@\n-# PDF\n+# PDF, better\n"}}
	srv := newServer(t, b, Options{})

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#rows tr.skill`))); err != nil {
		t.Fatal(err)
	}
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](rowNames))
	if err != nil || strings.Join(names, " ") != "docx evil pdf release-notes" {
		t.Errorf("the catalog lists %v, %v", names, err)
	}
	screenshot(t, ctx, "catalog")

	// Typing narrows the list without a submit.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("q"), "release"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#rows tr.skill').length === 1`, chromedp.WithPollingTimeout(20*time.Second)),
	); err != nil {
		t.Fatalf("typing in the search box: %v", err)
	}
	if names, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](rowNames)); err != nil || strings.Join(names, " ") != "release-notes" {
		t.Errorf("after typing release: %v, %v", names, err)
	}
	screenshot(t, ctx, "catalog-search")

	// A skill page: the rendered body and the chart.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/skills/pdf"), chromedp.WaitVisible(chromedp.CSS(`#body h1`))); err != nil {
		t.Fatal(err)
	}
	heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#body h1`)))
	if err != nil || heading != "PDF" {
		t.Errorf("skill page heading %q, %v", heading, err)
	}
	if bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('svg.chart rect').length`)); err != nil || bars != 2*weeks {
		t.Errorf("skill page chart: %d bars, %v", bars, err)
	}
	if cells, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#body table td').length`)); err != nil || cells != 2 {
		t.Errorf("the body's table rendered %d cells, %v", cells, err)
	}
	screenshot(t, ctx, "skill")

	// A hostile body runs nothing, even when its links are clicked.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/skills/evil"), chromedp.WaitVisible(chromedp.CSS(`#body`))); err != nil {
		t.Fatal(err)
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#body a')).map(a => a.getAttribute('href') || '')`))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(l)), "javascript:") || strings.HasPrefix(l, "data:") {
			t.Errorf("a %s link survived", l)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.alerted = false; window.alert = () => { window.alerted = true }; `+
			`Array.from(document.querySelectorAll('#body a:not([href^=http])')).forEach(a => a.click())`),
		chromedp.Sleep(300*time.Millisecond),
	); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || strings.Contains(title, "pwned") {
		t.Errorf("script from the skill ran: title %q, %v", title, err)
	}
	if alerted, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.alerted === true`)); err != nil || alerted {
		t.Errorf("a link of the skill called alert: %v", err)
	}
	screenshot(t, ctx, "evil")

	for _, p := range []string{"sources", "curation", "drafts", "fleet"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+p), chromedp.WaitVisible(chromedp.CSS(`main h1`))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		screenshot(t, ctx, p)
	}
}

// TestBrowserOtherSites: a page of another site (localhost is another
// site than 127.0.0.1) that puts a skill's page in an <img> gets a 403
// from the catalog, which renders nothing for it, as Chromium sends its
// Fetch Metadata; a link on that page to the catalog opens the page.
func TestBrowserOtherSites(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s, err := New(fixture(t), Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var renders atomic.Int64
	s.bodies.render = func(md, base string) rendered {
		renders.Add(1)
		return renderBody(md, base)
	}
	type seen struct {
		path, site, dest string
		code             int
	}
	var mu sync.Mutex
	var requests []seen
	catalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, r)
		mu.Lock()
		requests = append(requests, seen{r.URL.Path, r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Sec-Fetch-Dest"), rec.Code})
		mu.Unlock()
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(catalog.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>other</title>
<img id="i" src="%[1]s/skills/evil" onload="document.title='loaded'" onerror="document.title='failed'">
<a id="l" href="%[1]s/skills/pdf">the catalog</a>`, catalog.URL)
	}))
	t.Cleanup(other.Close)
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	if err := chromedp.Do(ctx, chromedp.Navigate(otherURL),
		chromedp.Poll[chromedp.Void](`document.title !== 'other'`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatal(err)
	}
	if title, err := chromedp.Run(ctx, chromedp.Title()); err != nil || title != "failed" {
		t.Errorf("the other site's <img>: %q, %v", title, err)
	}
	mu.Lock()
	got := slices.Clone(requests)
	mu.Unlock()
	if !slices.Contains(got, seen{"/skills/evil", "cross-site", "image", http.StatusForbidden}) {
		t.Errorf("the catalog saw %v, not the other site's image request", got)
	}
	if n := renders.Load(); n != 0 {
		t.Errorf("the other site's <img> had the body rendered %d times", n)
	}

	// Following the other site's link opens the catalog's page.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("l")), chromedp.WaitVisible(chromedp.CSS(`#body h1`))); err != nil {
		t.Fatalf("following a link from the other site: %v", err)
	}
	if heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#body h1`))); err != nil || heading != "PDF" {
		t.Errorf("the page the link opened: heading %q, %v", heading, err)
	}
	screenshot(t, ctx, "from-another-site")
}
