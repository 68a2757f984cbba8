package serve

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer is a server over b whose body renderings are counted,
// and held by hold (when not nil) before they render.
func countingServer(t *testing.T, b Backend, hold func()) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	s, err := New(b, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var renders atomic.Int64
	s.bodies.render = func(md, base string) rendered {
		renders.Add(1)
		if hold != nil {
			hold()
		}
		return renderBody(md, base)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, &renders
}

// A skill's body is rendered once for all its views, until it changes;
// each skill's is its own.
func TestBodiesRenderOnce(t *testing.T) {
	t.Parallel()
	b := fixture(t)
	srv, renders := countingServer(t, b, nil)
	for _, c := range []struct {
		path    string
		views   int
		renders int64
		want    string
	}{
		{"/skills/pdf", 5, 1, "<code>scripts/extract.py FILE</code>"},
		{"/skills/docx", 3, 2, "<h1>DOCX</h1>"},
		{"/skills/pdf", 2, 2, "<code>scripts/extract.py FILE</code>"},
	} {
		for range c.views {
			if code, _, page := get(t, srv.URL+c.path); code != http.StatusOK || !strings.Contains(page, c.want) {
				t.Fatalf("GET %s: %d, no %q in\n%s", c.path, code, c.want, page)
			}
		}
		if n := renders.Load(); n != c.renders {
			t.Errorf("after %d views of %s: %d renderings, want %d", c.views, c.path, n, c.renders)
		}
	}
	// A changed body is rendered anew.
	b.writeSkill(t, "pdf", "Extract text and tables from PDF files", "# PDF, second edition\n", nil)
	if _, _, page := get(t, srv.URL+"/skills/pdf"); !strings.Contains(page, "<h1>PDF, second edition</h1>") {
		t.Errorf("the changed body is not shown:\n%s", page)
	}
	if n := renders.Load(); n != 3 {
		t.Errorf("after a change: %d renderings, want 3", n)
	}
}

// Views of one page at the same time render its body once: the first
// renders, the others wait for it. The rendering is held until every
// view has asked for it (each rendering its own would all be held), or
// for a while.
func TestConcurrentViewsRenderOnce(t *testing.T) {
	t.Parallel()
	const views = 8
	b := fixture(t)
	b.writeSkill(t, "deep", "Hostile", strings.Repeat("- ", maxMarkdown/2-1)+"a", nil)
	var started atomic.Int64
	srv, renders := countingServer(t, b, func() {
		started.Add(1)
		for deadline := time.Now().Add(500 * time.Millisecond); started.Load() < views && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	})
	var wg sync.WaitGroup
	pages := make([]string, views)
	for i := range views {
		wg.Go(func() {
			res, err := http.Get(srv.URL + "/skills/deep")
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			page, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusOK {
				t.Errorf("view %d: %d", i, res.StatusCode)
			}
			pages[i] = string(page)
		})
	}
	wg.Wait()
	if n := renders.Load(); n != 1 {
		t.Errorf("%d views at the same time: %d renderings, want 1", views, n)
	}
	for i, p := range pages {
		if p != pages[0] || !strings.Contains(p, noteNested) {
			t.Errorf("view %d differs from the first, or lacks the note", i)
		}
	}
}

// The bodies kept stay within their bytes: the least recently viewed
// go first, and are rendered again when viewed again.
func TestBodiesBoundedByBytes(t *testing.T) {
	t.Parallel()
	var renders int
	b := newBodies(64 << 10)
	b.render = func(md, base string) rendered {
		renders++
		return renderBody(md, base)
	}
	md := func(i int) string { return fmt.Sprintf("# Skill %d\n\n%s\n", i, strings.Repeat("word ", 2000)) }
	for i := range 20 {
		b.get(md(i), "/skills/s/files/")
		if b.bytes > b.max {
			t.Fatalf("after %d bodies: %d bytes kept, more than %d", i+1, b.bytes, b.max)
		}
	}
	if renders != 20 || b.recent.Len() >= 20 || b.recent.Len() == 0 {
		t.Fatalf("%d renderings, %d kept", renders, b.recent.Len())
	}
	b.get(md(19), "/skills/s/files/") // kept: the last viewed
	if renders != 20 {
		t.Errorf("the last body viewed was rendered again")
	}
	b.get(md(0), "/skills/s/files/") // gone: the first
	if renders != 21 {
		t.Errorf("the first body viewed was kept past the bound")
	}
	b.get(md(19), "/skills/t/files/") // another base is another body
	if renders != 22 {
		t.Errorf("a body rendered against another base was taken as kept")
	}
	// A body larger than the bound is rendered and not kept.
	small := newBodies(1 << 10)
	small.get(md(0), "")
	if small.recent.Len() != 0 || small.bytes != 0 {
		t.Errorf("a body larger than the bound is kept: %d bytes", small.bytes)
	}
}
