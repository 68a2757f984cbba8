// Package metrics keeps counters and a histogram and writes them, with
// gauges a caller computes at scrape time, in Prometheus's text
// exposition format (version 0.0.4). It is the small part of a metrics
// client the daemon needs: a full client's package init alone cost every
// skillsync process, not only the daemon, milliseconds at start.
package metrics

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ContentType is the type of what Write writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Registry holds metrics in the order they were added.
type Registry struct {
	mu      sync.Mutex
	metrics []metric
}

// metric is one family: it writes its HELP, TYPE and series.
type metric interface {
	write(w *bufio.Writer)
}

// Gather is called at each scrape to add gauges computed then.
type Gather func(g *Gauges)

// Counter adds a counter family with the given labels.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	c := &CounterVec{family: family{name: name, help: help, kind: "counter", labels: labels}, values: map[string]*series{}}
	r.add(c)
	return c
}

// Histogram adds a histogram without labels over the given upper bounds,
// in increasing order.
func (r *Registry) Histogram(name, help string, bounds []float64) *Histogram {
	h := &Histogram{family: family{name: name, help: help, kind: "histogram"}, bounds: bounds, counts: make([]uint64, len(bounds))}
	r.add(h)
	return h
}

// Gather adds gauges computed at each scrape.
func (r *Registry) Gather(f Gather) { r.add(gatherer(f)) }

func (r *Registry) add(m metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metrics = append(r.metrics, m)
}

// Write writes every metric in the text format. The text is rendered in
// memory first: a slow reader must not hold the locks that the counters'
// writers wait on.
func (r *Registry) Write(w io.Writer) error {
	r.mu.Lock()
	ms := slices.Clone(r.metrics)
	r.mu.Unlock()
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	for _, m := range ms {
		m.write(bw)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// family is what every metric family has.
type family struct {
	name, help, kind string
	labels           []string
}

func (f *family) header(w *bufio.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.kind)
}

// series is one set of label values and its value.
type series struct {
	values []string
	value  float64
}

// CounterVec is a counter family. Its methods are safe for concurrent use.
type CounterVec struct {
	family
	mu     sync.Mutex
	values map[string]*series
}

// key joins label values with a byte no UTF-8 text holds.
func key(values []string) string { return strings.Join(values, "\xff") }

// With returns the series of the label values, made at 0 if new. It
// panics when the count of values is not the family's count of labels:
// that is a programming error.
func (c *CounterVec) With(values ...string) *Counter {
	if len(values) != len(c.labels) {
		panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", c.name, len(c.labels), len(values)))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(values)
	s, ok := c.values[k]
	if !ok {
		s = &series{values: slices.Clone(values)}
		c.values[k] = s
	}
	return &Counter{vec: c, s: s}
}

// Delete removes the series of the label values.
func (c *CounterVec) Delete(values ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.values, key(values))
}

func (c *CounterVec) write(w *bufio.Writer) {
	c.header(w)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(c.values)) {
		s := c.values[k]
		writeSample(w, c.name, c.labels, s.values, s.value)
	}
}

// Counter is one series of a CounterVec.
type Counter struct {
	vec *CounterVec
	s   *series
}

// Add adds v, which must not be negative: a counter only goes up.
func (c *Counter) Add(v float64) {
	if v < 0 || math.IsNaN(v) {
		panic(fmt.Sprintf("metrics: %s cannot go down by %v", c.vec.name, v))
	}
	c.vec.mu.Lock()
	defer c.vec.mu.Unlock()
	c.s.value += v
}

// Inc adds one.
func (c *Counter) Inc() { c.Add(1) }

// Histogram counts observations into buckets. Safe for concurrent use.
type Histogram struct {
	family
	mu     sync.Mutex
	bounds []float64
	counts []uint64 // per bucket, not cumulative
	sum    float64
	count  uint64
}

// Observe counts v.
func (h *Histogram) Observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i, _ := slices.BinarySearch(h.bounds, v); i < len(h.bounds) {
		h.counts[i]++
	}
	h.sum += v
	h.count++
}

func (h *Histogram) write(w *bufio.Writer) {
	h.header(w)
	h.mu.Lock()
	defer h.mu.Unlock()
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		writeSample(w, h.name+"_bucket", []string{"le"}, []string{formatFloat(b)}, float64(cum))
	}
	writeSample(w, h.name+"_bucket", []string{"le"}, []string{"+Inf"}, float64(h.count))
	writeSample(w, h.name+"_sum", nil, nil, h.sum)
	writeSample(w, h.name+"_count", nil, nil, float64(h.count))
}

// Gauges collects the gauges of one scrape, grouped by name in the order
// each name first appears.
type Gauges struct {
	order    []string
	families map[string]*gaugeFamily
}

type gaugeFamily struct {
	family
	samples []series
}

// Add adds a gauge sample. Every sample of one name must give the same
// labels and help.
func (g *Gauges) Add(name, help string, labels []string, values []string, v float64) {
	if g.families == nil {
		g.families = map[string]*gaugeFamily{}
	}
	f, ok := g.families[name]
	if !ok {
		f = &gaugeFamily{family: family{name: name, help: help, kind: "gauge", labels: labels}}
		g.families[name] = f
		g.order = append(g.order, name)
	}
	f.samples = append(f.samples, series{values: values, value: v})
}

// Describe names a gauge family that has no sample this scrape, so its
// HELP and TYPE are still written.
func (g *Gauges) Describe(name, help string, labels ...string) {
	g.Add(name, help, labels, nil, 0)
	f := g.families[name]
	f.samples = f.samples[:len(f.samples)-1]
}

type gatherer Gather

func (f gatherer) write(w *bufio.Writer) {
	var g Gauges
	f(&g)
	for _, name := range g.order {
		fam := g.families[name]
		fam.header(w)
		for _, s := range fam.samples {
			writeSample(w, fam.name, fam.labels, s.values, s.value)
		}
	}
}

func writeSample(w *bufio.Writer, name string, labels, values []string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 {
		// Labels by name, as Prometheus's own client writes them.
		order := make([]int, len(labels))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
		w.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				w.WriteByte(',')
			}
			w.WriteString(labels[i])
			w.WriteString(`="`)
			w.WriteString(escapeLabel(values[i]))
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

// escapeLabel escapes a label value: backslash, double quote, newline.
// A value that is not UTF-8 (a target folder's name is whatever bytes the
// file system holds) has its stray bytes replaced by U+FFFD: Prometheus's
// parser refuses such a value, and with it the whole scrape.
func escapeLabel(s string) string { return labelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD")) }

// escapeHelp escapes HELP text: backslash and newline.
func escapeHelp(s string) string { return helpEscaper.Replace(s) }
