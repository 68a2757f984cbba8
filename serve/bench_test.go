package serve

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/skillsync/skillsync/layering"
)

// readOnce is a dirBackend whose catalog is read once, as the engine reads
// the marketplace from the cache's records: the benchmarks measure the
// pages, not discovery on disk.
type readOnce struct {
	*dirBackend
	cat *layering.Catalog
}

func (r *readOnce) Catalog(context.Context) (*layering.Catalog, error) { return r.cat, nil }

func (r *readOnce) Open(_ context.Context, name, file string) (fs.File, *layering.Winner, error) {
	return openIn(r.cat, name, file)
}

func benchBackend(b *testing.B, n int) *readOnce {
	d := newDirBackend(b)
	for i := range n {
		d.writeSkill(b, fmt.Sprintf("skill-%04d", i), fmt.Sprintf("Skill number %d does task %d with files of kind %d", i, i%37, i%11),
			fmt.Sprintf("# Skill %d\n\nSteps:\n\n1. one\n2. two\n\n```sh\nrun %d\n```\n", i, i), map[string]string{"scripts/run.sh": "echo hi\n"})
	}
	for i := range 200 {
		d.use(b, fmt.Sprintf("skill-%04d", i*7%n), now.AddDate(0, 0, -i%80), i%3 == 0)
	}
	cat, err := d.Catalog(context.Background())
	if err != nil || len(cat.Winners) != n {
		b.Fatalf("%d skills in the catalog, want %d: %v %v", len(cat.Winners), n, err, cat.Problems)
	}
	return &readOnce{dirBackend: d, cat: cat}
}

// BenchmarkPages serves the catalog of 2,000 skills (all rows, and a
// search) and one skill page through the whole handler.
func BenchmarkPages(b *testing.B) {
	back := benchBackend(b, 2000)
	s, err := New(back, Options{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	for _, p := range []string{"/", "/?q=task+12", "/skills/skill-0700"} {
		b.Run(p, func(b *testing.B) {
			for range b.N {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+p, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", p, rec.Code)
				}
			}
		})
	}
}
