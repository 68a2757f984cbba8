package metrics

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parse reads r's output with Prometheus's own text parser.
func parse(t *testing.T, r *Registry) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatalf("the output does not parse: %v\n%s", err, buf.String())
	}
	return fams, buf.String()
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestCountersHistogramAndGauges(t *testing.T) {
	t.Parallel()
	var r Registry
	runs := r.Counter("jobs_total", "Jobs run,\nby result \\ kind.", "result")
	runs.With("success").Add(2)
	runs.With("failure").Inc()
	hostile := "a \"quoted\" \\ value\nwith a newline"
	runs.With(hostile).Inc()
	gone := r.Counter("gone_total", "A series deleted.", "source")
	gone.With("old").Inc()
	gone.Delete("old")
	h := r.Histogram("took_seconds", "How long.", []float64{0.1, 1, 10})
	for _, v := range []float64{0.05, 0.1, 0.5, 20} {
		h.Observe(v)
	}
	r.Gather(func(g *Gauges) {
		g.Add("source_skills", "Skills by state.", []string{"state", "source"}, []string{"active", "team"}, 7)
		g.Add("source_skills", "Skills by state.", []string{"state", "source"}, []string{"stale", "team"}, 1)
		g.Describe("source_revision_info", "Revision.", "source", "revision")
	})
	r.Gather(Process(time.Unix(1700000000, 0)))

	fams, text := parse(t, &r)
	f := fams["jobs_total"]
	if f.GetType() != dto.MetricType_COUNTER || f.GetHelp() != "Jobs run,\nby result \\ kind." || len(f.GetMetric()) != 3 {
		t.Fatalf("jobs_total: %v", f)
	}
	got := map[string]float64{}
	for _, m := range f.GetMetric() {
		got[labels(m)["result"]] = m.GetCounter().GetValue()
	}
	if got["success"] != 2 || got["failure"] != 1 || got[hostile] != 1 {
		t.Errorf("counters %v", got)
	}
	if g := fams["gone_total"]; g != nil && len(g.GetMetric()) != 0 {
		t.Errorf("a deleted series is still written: %v", g)
	}
	hist := fams["took_seconds"].GetMetric()[0].GetHistogram()
	if hist.GetSampleCount() != 4 || hist.GetSampleSum() != 20.65 {
		t.Errorf("histogram count %d sum %v", hist.GetSampleCount(), hist.GetSampleSum())
	}
	want := map[float64]uint64{0.1: 2, 1: 3, 10: 3, math.Inf(1): 4}
	for _, b := range hist.GetBucket() {
		if want[b.GetUpperBound()] != b.GetCumulativeCount() {
			t.Errorf("bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want[b.GetUpperBound()])
		}
	}
	if !strings.Contains(text, `source_skills{source="team",state="active"} 7`) || !strings.Contains(text, `jobs_total{result="success"} 2`) {
		t.Errorf("series not written as Prometheus's client writes them:\n%s", text)
	}
	if !strings.Contains(text, "# TYPE gone_total counter") || strings.Contains(text, "old") {
		t.Errorf("a deleted series is still written, or its family is not:\n%s", text)
	}
	if f := fams["source_skills"]; f.GetType() != dto.MetricType_GAUGE || len(f.GetMetric()) != 2 {
		t.Errorf("source_skills: %v", f)
	}
	if !strings.Contains(text, "# TYPE source_revision_info gauge") {
		t.Errorf("a gauge described without samples has no TYPE line:\n%s", text)
	}
	if v := fams["process_start_time_seconds"].GetMetric()[0].GetGauge().GetValue(); v != 1700000000 {
		t.Errorf("start time %v", v)
	}
	if fams["go_goroutines"].GetMetric()[0].GetGauge().GetValue() < 1 {
		t.Error("no goroutines")
	}
}

func TestCountersAreSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	var r Registry
	c := r.Counter("hits_total", "Hits.", "path")
	h := r.Histogram("took_seconds", "How long.", []float64{1})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				c.With([]string{"a", "b"}[i%2]).Inc()
				h.Observe(0.5)
			}
		}()
	}
	for range 10 {
		parse(t, &r)
	}
	wg.Wait()
	fams, _ := parse(t, &r)
	total := 0.0
	for _, m := range fams["hits_total"].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	if total != 8000 || fams["took_seconds"].GetMetric()[0].GetHistogram().GetSampleCount() != 8000 {
		t.Errorf("counted %v and %d, want 8000 each", total, fams["took_seconds"].GetMetric()[0].GetHistogram().GetSampleCount())
	}
}

func TestMisuseIsCaught(t *testing.T) {
	t.Parallel()
	var r Registry
	c := r.Counter("x_total", "X.", "a")
	for name, f := range map[string]func(){
		"labels":   func() { c.With("1", "2") },
		"negative": func() { c.With("1").Add(-1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestLabelNotUTF8: a label value that is not UTF-8 (a target folder
// named in Latin-1) is written with U+FFFD for its stray bytes: as it
// was, Prometheus's parser refused the value and so the whole scrape.
func TestLabelNotUTF8(t *testing.T) {
	t.Parallel()
	var r Registry
	r.Counter("conflicts_total", "Conflicts.", "target").With("caf\xe9/skills").Inc()
	r.Gather(func(g *Gauges) {
		g.Add("info", "Info.", []string{"revision"}, []string{"\xff\xfe"}, 1)
	})
	fams, _ := parse(t, &r)
	if got := labels(fams["conflicts_total"].GetMetric()[0])["target"]; got != "caf\uFFFD/skills" {
		t.Errorf("target label %q", got)
	}
	if got := labels(fams["info"].GetMetric()[0])["revision"]; got != "\uFFFD" {
		t.Errorf("revision label %q", got)
	}
}
