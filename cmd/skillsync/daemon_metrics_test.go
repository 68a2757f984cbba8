package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// The daemon over the real engine: these tests were daemon's, whose own
// tests now run over engines of their own making and so do not link the
// whole program (a 45 MB race-built binary on every go test run); the
// CLI's test binary links the engine, the daemon and git already.

// gitDaemon is a daemon, in this process, over a workspace whose one
// source is a git remote served over smart HTTP.
type gitDaemon struct {
	repo *gittest.Repo
	ws   string
	addr string
	logs *skilltest.Buffer
	stop func() error
}

func startGitDaemon(t *testing.T) *gitDaemon {
	t.Helper()
	repo := gittest.NewRepo(t, "main")
	repo.Skill("pdf", "Read PDF files.")
	repo.Commit("one")
	_, url := repo.ServeHTTP("skills", "", "")
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, config.FileName), "repositories:\n  - name: team\n    git: "+url+"\n    timeout: 10s\n"+
		"targets:\n  - dir: .claude/skills\nschedule:\n  sync: \"@every 1s\"\n  curate: \"@every 1h\"\n  import: \"@every 1h\"\n")
	store := filepath.Join(t.TempDir(), "git-store")
	g := &gitDaemon{repo: repo, ws: ws, logs: &skilltest.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Serve(ctx, daemon.Config{
			Open: func(context.Context) (daemon.Engine, error) {
				cfg, err := config.Load(filepath.Join(ws, config.FileName), skillsync.Kinds())
				if err != nil {
					return nil, err
				}
				return skillsync.NewEngine(cfg, skillsync.WithGitStore(store), skillsync.WithActor("daemon")).Daemon(), nil
			},
			Logger:  slog.New(slog.NewTextHandler(g.logs, nil)),
			Listen:  "127.0.0.1:0",
			Serving: func(a string) { addr <- a },
		})
	}()
	select {
	case g.addr = <-addr:
	case err := <-done:
		cancel()
		t.Fatalf("the daemon ended before it served: %v", err)
	}
	g.stop = sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { _ = g.stop() })
	return g
}

func (g *gitDaemon) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + g.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// scrape parses /metrics with Prometheus's own text parser.
func (g *gitDaemon) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := g.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams
}

// value is the value of the series of name whose labels include want;
// -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

// waitUntil polls cond; the deadline, longer than eventually's, leaves
// room for a sync every second on a busy machine.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDaemonMetricsAndReadiness: a daemon over a real git remote counts
// its syncs and moves the source's last success and revision after each;
// /readyz turns 503, naming the source, when the remote goes away, and
// 200 when it comes back; /metrics parses with Prometheus's parser and
// holds every metric the dashboard in docs/ queries.
func TestDaemonMetricsAndReadiness(t *testing.T) {
	t.Parallel()
	g := startGitDaemon(t)
	if code, body := g.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d %s", code, body)
	}
	team := map[string]string{"source": "team"}
	waitUntil(t, "the first sync to be ready", func() bool { code, _ := g.get(t, "/readyz"); return code == http.StatusOK })
	fams := g.scrape(t)
	first := value(fams, daemon.MetricSourceLastSuccess, team)
	if first <= 0 || value(fams, daemon.MetricSyncRuns, map[string]string{"result": "success"}) < 1 {
		t.Fatalf("after the first sync: last success %v, runs %v", first, value(fams, daemon.MetricSyncRuns, nil))
	}
	if v := value(fams, daemon.MetricSourceRevision, map[string]string{"source": "team", "revision": g.repo.Head()}); v != 1 {
		t.Errorf("revision_info for %s = %v, want 1", g.repo.Head(), v)
	}
	if v := value(fams, daemon.MetricSkills, map[string]string{"source": "team", "state": "active"}); v != 1 {
		t.Errorf("skills{team,active} = %v, want 1", v)
	}
	written := value(fams, daemon.MetricFilesWritten, nil)
	if written < 1 || value(fams, daemon.MetricBytesWritten, nil) < 1 || value(fams, daemon.MetricSourceFetchBytes, team) < 1 {
		t.Errorf("files written %v, bytes %v, fetch bytes %v after the first sync", written,
			value(fams, daemon.MetricBytesWritten, nil), value(fams, daemon.MetricSourceFetchBytes, team))
	}
	for _, name := range issueMetrics {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	checkDashboard(t, fams)

	// A new commit: the counters and the last success move on.
	g.repo.Skill("docx", "Write Word files.")
	head := g.repo.Commit("two")
	waitUntil(t, "the new revision", func() bool {
		fams = g.scrape(t)
		return value(fams, daemon.MetricSourceRevision, map[string]string{"source": "team", "revision": head}) == 1
	})
	if n := len(fams[daemon.MetricSourceRevision].GetMetric()); n != 1 {
		t.Errorf("revision_info has %d series, want one per source", n)
	}
	if v := value(fams, daemon.MetricSourceLastSuccess, team); v <= first {
		t.Errorf("last success %v did not move past %v", v, first)
	}
	if v := value(fams, daemon.MetricFilesWritten, nil); v <= written {
		t.Errorf("files written %v did not move past %v", v, written)
	}

	// The remote goes away: not ready, and the body names the source.
	gone := g.repo.Dir + ".gone"
	if err := os.Rename(g.repo.Dir, gone); err != nil {
		t.Fatal(err)
	}
	var body string
	waitUntil(t, "/readyz to turn 503", func() bool {
		var code int
		code, body = g.get(t, "/readyz")
		return code == http.StatusServiceUnavailable
	})
	var ready struct {
		Ready    bool              `json:"ready"`
		NotReady []daemon.NotReady `json:"not_ready"`
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil || ready.Ready || len(ready.NotReady) != 1 || ready.NotReady[0].Source != "team" ||
		!strings.Contains(ready.NotReady[0].Reason, "last sync failed") {
		t.Errorf("/readyz body %s (%v)", body, err)
	}
	fams = g.scrape(t)
	if value(fams, daemon.MetricSyncRuns, map[string]string{"result": "failure"}) < 1 {
		t.Errorf("no failed sync counted: %v", value(fams, daemon.MetricSyncRuns, nil))
	}

	// It comes back: ready again.
	if err := os.Rename(gone, g.repo.Dir); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "/readyz to turn 200 again", func() bool { code, _ := g.get(t, "/readyz"); return code == http.StatusOK })

	if err := g.stop(); err != nil {
		t.Errorf("Serve returned %v after its ctx ended", err)
	}
}

// issueMetrics are the names the daemon promises (issue 23).
var issueMetrics = []string{
	"skillsync_sync_runs_total", "skillsync_sync_duration_seconds", "skillsync_source_last_success_timestamp_seconds",
	"skillsync_source_revision_info", "skillsync_source_fetch_duration_seconds", "skillsync_source_fetch_bytes_total",
	"skillsync_skills", "skillsync_files_written_total", "skillsync_bytes_written_total", "skillsync_target_conflicts_total",
	"skillsync_curate_changes_total", "skillsync_usage_records_total", "skillsync_fleet_push_total",
	"go_goroutines", "process_resident_memory_bytes",
}

// checkDashboard: every metric docs/grafana-dashboard.json queries is one
// /metrics exposes (a histogram's by its _bucket, _sum and _count).
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	names := regexp.MustCompile(`\b(skillsync|go|process)_[a-z_]+\b`)
	seen := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, name := range names.FindAllString(tg.Expr, -1) {
				seen++
				base := name
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(name, suffix); ok && fams[b] != nil && fams[b].GetType() == dto.MetricType_HISTOGRAM {
						base = b
					}
				}
				if _, ok := fams[base]; !ok {
					t.Errorf("the dashboard queries %s, which /metrics does not expose", name)
				}
			}
		}
	}
	if seen < len(issueMetrics)-2 {
		t.Errorf("the dashboard queries %d metrics, want at least every skillsync one", seen)
	}
}
