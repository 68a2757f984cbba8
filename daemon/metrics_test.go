package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/repository"
)

// stuckEngine's syncs wait until release is closed; it is the engine a
// slow fetch makes, without a network.
type stuckEngine struct {
	started chan struct{}
	release chan struct{}
}

func (e *stuckEngine) Settings() Settings {
	return Settings{Sync: "@every 1h", Sources: []string{"team"}, Targets: []string{".claude/skills"}}
}

func (e *stuckEngine) Sync(ctx context.Context, _ SyncRequest) (*SyncResult, error) {
	select {
	case e.started <- struct{}{}:
	default:
	}
	select {
	case <-e.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc"}}}, nil
}

func (e *stuckEngine) Curate(context.Context) (*CurateResult, error)  { return &CurateResult{}, nil }
func (e *stuckEngine) Import(context.Context) ([]ImportResult, error) { return nil, nil }
func (e *stuckEngine) PushSources() []string                          { return nil }
func (e *stuckEngine) OpenListener(string, func(string)) (repository.Listener, error) {
	return nil, nil
}
func (e *stuckEngine) CachedRevision(string) string { return "" }

// TestScrapeNeverWaitsForASync: while the first sync hangs, /metrics,
// /healthz and /readyz answer at once (not ready: never synced), and once
// it ends the source is ready and its revision exposed.
func TestScrapeNeverWaitsForASync(t *testing.T) {
	t.Parallel()
	eng := &stuckEngine{started: make(chan struct{}, 1), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Config{Open: func(context.Context) (Engine, error) { return eng, nil }, Listen: "127.0.0.1:0",
			Serving: func(a string) { addr <- a }})
	}()
	base := "http://" + <-addr
	<-eng.started
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("%s while a sync runs: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, `skillsync_sync_runs_total{result="success"} 0`) ||
		!strings.Contains(body, `skillsync_target_conflicts_total{target=".claude/skills"} 0`) {
		t.Errorf("/metrics during a sync: %d\n%s", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
	// A page of another site whose name resolves to 127.0.0.1 (DNS
	// rebinding) reads nothing: the metrics name sources, paths, errors.
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Host = "rebind.example"
	if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("/metrics by another host's name: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, `"source":"team","reason":"not synced yet"`) {
		t.Errorf("/readyz before the first sync: %d %s", code, body)
	}
	close(eng.release)
	deadline := time.Now().Add(time.Minute)
	for {
		code, _ := get("/readyz")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never ready after the sync")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, body := get("/metrics"); !strings.Contains(body, `skillsync_source_revision_info{revision="abc",source="team"} 1`) {
		t.Errorf("/metrics after the sync:\n%s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestNotReadyAfterThreeIntervals: a source whose last success is older
// than three sync intervals is not ready; a dirty cache is not either.
func TestNotReadyAfterThreeIntervals(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recent, old := now.Add(-29*time.Minute), now.Add(-31*time.Minute)
	s := &State{SyncEvery: Seconds(600), Sources: map[string]SourceState{
		"a": {LastSuccess: &recent}, "b": {LastSuccess: &old}, "c": {LastSuccess: &recent, LastError: "boom"}}}
	got := s.NotReady(now)
	if len(got) != 2 || got[0].Source != "b" || !strings.Contains(got[0].Reason, "last synced 31m0s ago, 3 scheduled syncs since") ||
		got[1].Source != "c" || got[1].Reason != "last sync failed: boom" {
		t.Errorf("NotReady = %+v", got)
	}
	s.Sources = map[string]SourceState{"a": {LastSuccess: &recent}}
	s.CacheDirty = true
	if got := s.NotReady(now); len(got) != 1 || got[0].Source != "" {
		t.Errorf("dirty cache: %+v", got)
	}
	if Interval("@every 10m") != 10*time.Minute || Interval("") != 0 {
		t.Errorf("Interval: %v %v", Interval("@every 10m"), Interval(""))
	}
}

// fleetEngine has a fleet push job of its own (Jobber) that fails.
type fleetEngine struct{ stuckEngine }

func (e *fleetEngine) MoreJobs() ([]Job, error) {
	return []Job{NewJob(JobFleetPush, "@every 1s", func(context.Context) error { return errors.New("fleet store unreachable") })}, nil
}

// TestFleetPushJobIsCountedAndShown: an engine's own fleet push job runs
// on its schedule; its failures are counted and the state says why.
func TestFleetPushJobIsCountedAndShown(t *testing.T) {
	t.Parallel()
	eng := &fleetEngine{stuckEngine{started: make(chan struct{}, 1), release: make(chan struct{})}}
	close(eng.release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Config{Open: func(context.Context) (Engine, error) { return eng, nil }, Listen: "127.0.0.1:0",
			Serving: func(a string) { addr <- a }})
	}()
	base := "http://" + <-addr
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `skillsync_fleet_push_total{result="failure"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed fleet push counted:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestSyncFailedAsAWhole: a sync that failed beyond its sources (a
// target, the cache, a stop), or returned no result at all, is a failure
// and stamps no source's success: not ready, with or without sources,
// until a sync passes.
func TestSyncFailedAsAWhole(t *testing.T) {
	t.Parallel()
	for _, sources := range [][]string{{"team"}, nil} {
		m := newMonitor(slog.New(slog.DiscardHandler))
		m.configured(Settings{Sources: sources})
		var results []SourceResult
		for _, name := range sources {
			results = append(results, SourceResult{Name: name, Revision: "abc"})
		}
		placed := errors.New("place skills in .claude/skills: not a directory")
		m.synced(SyncRequest{}, &SyncResult{Sources: results, Err: placed.Error()}, placed, time.Second)
		st := m.Snapshot()
		got := st.NotReady(time.Now())
		if len(got) == 0 || got[len(got)-1].Reason != "the last sync failed: "+placed.Error() {
			t.Errorf("sources %v, a sync failed at a target: NotReady %+v", sources, got)
		}
		for name, s := range st.Sources {
			if s.LastSuccess != nil {
				t.Errorf("source %s stamped a success by a failed sync", name)
			}
		}
		m.synced(SyncRequest{}, nil, errors.New("lock the workspace: busy"), time.Second)
		if got := m.Snapshot().NotReady(time.Now()); len(got) == 0 || !strings.Contains(got[len(got)-1].Reason, "busy") {
			t.Errorf("sources %v, a sync with no result: NotReady %+v", sources, got)
		}
		m.synced(SyncRequest{}, &SyncResult{Sources: results}, nil, time.Second)
		if got := m.Snapshot().NotReady(time.Now()); len(got) != 0 {
			t.Errorf("sources %v, after a sync that passed: NotReady %+v", sources, got)
		}
		var out strings.Builder
		if err := m.reg.Write(&out); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`skillsync_sync_runs_total{result="failure"} 2`, `skillsync_sync_runs_total{result="success"} 1`, `skillsync_sync_runs_total{result="partial"} 0`} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("sources %v: metrics lack %s:\n%s", sources, want, out.String())
			}
		}
	}
}

// TestSyncWithATargetRefused: a sync whose only failure is a target
// refused fails, and the daemon is not ready, but its sources did sync
// (the cache and the lock took them in first): their success is stamped,
// and their last success metric moves.
func TestSyncWithATargetRefused(t *testing.T) {
	t.Parallel()
	m := newMonitor(slog.New(slog.DiscardHandler))
	m.configured(Settings{Sources: []string{"team", "gone"}})
	refused := "target .claude/skills is reached through a symbolic link"
	m.synced(SyncRequest{}, &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc"}, {Name: "gone", Err: "repository not found"}},
		Err: refused, Refused: true}, errors.New(refused), time.Second)
	st := m.Snapshot()
	if st.Sources["team"].LastSuccess == nil || st.Sources["gone"].LastSuccess != nil {
		t.Errorf("team's success %v (want stamped), gone's %v (want none)", st.Sources["team"].LastSuccess, st.Sources["gone"].LastSuccess)
	}
	got := st.NotReady(time.Now())
	if len(got) == 0 || got[len(got)-1].Reason != "the last sync failed: "+refused {
		t.Errorf("NotReady %+v, want the refusal last", got)
	}
}

// brokenEngine's syncs panic and its curations fail.
type brokenEngine struct{ stuckEngine }

func (e *brokenEngine) Settings() Settings {
	return Settings{Sync: "@every 1h", Curate: "@every 1h", Sources: []string{"team"}}
}

func (e *brokenEngine) Sync(context.Context, SyncRequest) (*SyncResult, error) { panic("a bug") }

func (e *brokenEngine) Curate(context.Context) (*CurateResult, error) {
	return nil, errors.New("the usage file is locked")
}

// TestPanickedSyncAndFailedCurationAreShown: a sync that panics counts
// as failed and keeps the daemon not ready, saying so; a curation that
// fails is not stamped as a run, and says why.
func TestPanickedSyncAndFailedCurationAreShown(t *testing.T) {
	t.Parallel()
	m := newMonitor(slog.New(slog.DiscardHandler))
	eng := &brokenEngine{}
	m.configured(eng.Settings())
	setup, err := jobs(eng, slog.New(slog.DiscardHandler), m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range setup.Jobs {
		switch j.Name() {
		case JobSync:
			if err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "panicked") {
				t.Errorf("the sync job: %v", err)
			}
		case JobCurate:
			if err := j.Run(context.Background()); err == nil {
				t.Error("the curation job did not fail")
			}
		}
	}
	st := m.Snapshot()
	if got := st.NotReady(time.Now()); len(got) == 0 || !strings.Contains(got[len(got)-1].Reason, "panicked") {
		t.Errorf("after a panicked sync: NotReady %+v", got)
	}
	if st.LastCurate != nil || st.LastCurateError != "the usage file is locked" || st.NextCurate == nil {
		t.Errorf("after a failed curation: last %v, error %q, next %v", st.LastCurate, st.LastCurateError, st.NextCurate)
	}
	var out strings.Builder
	if err := m.reg.Write(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `skillsync_sync_runs_total{result="failure"} 1`) {
		t.Errorf("the panicked sync is not counted as failed:\n%s", out.String())
	}
}

// TestNotReadyOnAnUnevenSchedule: staleness counts the runs of the
// schedule itself: a weekend without runs makes no source stale, three
// runs missed on Monday morning do; @every counts as its interval.
func TestNotReadyOnAnUnevenSchedule(t *testing.T) {
	t.Parallel()
	friday := time.Date(2026, 12, 4, 17, 0, 0, 0, time.Local) // a Friday
	for _, tc := range []struct {
		schedule string
		last     time.Time
		now      time.Time
		stale    bool
	}{
		{"0 9-17 * * 1-5", friday, friday.Add(19 * time.Hour), false},                                // Saturday noon
		{"0 9-17 * * 1-5", friday, friday.Add(3*24*time.Hour - 6*time.Hour - 30*time.Minute), false}, // Monday 10:30: runs at 9 and 10
		{"0 9-17 * * 1-5", friday, friday.Add(3*24*time.Hour - 6*time.Hour + time.Minute), true},     // Monday 11:01: and at 11
		{"@every 10m", friday, friday.Add(29 * time.Minute), false},
		{"@every 10m", friday, friday.Add(31 * time.Minute), true},
	} {
		last := tc.last
		s := &State{SyncEvery: Seconds(Interval(tc.schedule).Seconds()), SyncSchedule: tc.schedule, Sources: map[string]SourceState{"a": {LastSuccess: &last}}}
		if got := len(s.NotReady(tc.now)) > 0; got != tc.stale {
			t.Errorf("%s, last %s, now %s: stale %v, want %v", tc.schedule, tc.last.Format(time.RFC3339), tc.now.Format(time.RFC3339), got, tc.stale)
		}
	}
}

// orderEngine records which of Import and Curate ran, in order; its
// import fails when failImport is set.
type orderEngine struct {
	stuckEngine
	failImport bool
	calls      []string
}

func (e *orderEngine) Settings() Settings {
	return Settings{Curate: "@every 1h", Import: "@every 1h", Sources: []string{"team"}}
}

func (e *orderEngine) Import(context.Context) ([]ImportResult, error) {
	e.calls = append(e.calls, "import")
	if e.failImport {
		return nil, errors.New("import claude: the marks are lost")
	}
	return nil, nil
}

func (e *orderEngine) Curate(context.Context) (*CurateResult, error) {
	e.calls = append(e.calls, "curate")
	return &CurateResult{}, nil
}

// TestCurationImportsFirst: the curate job imports the agents' records
// before it curates, so a skill used since the last import is not taken
// for idle; when the import fails, nothing is curated, and the state
// says why.
func TestCurationImportsFirst(t *testing.T) {
	t.Parallel()
	for _, fail := range []bool{false, true} {
		m := newMonitor(slog.New(slog.DiscardHandler))
		eng := &orderEngine{failImport: fail}
		m.configured(eng.Settings())
		setup, err := jobs(eng, slog.New(slog.DiscardHandler), m, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, j := range setup.Jobs {
			if j.Name() != JobCurate {
				continue
			}
			found = true
			err := j.Run(context.Background())
			want := []string{"import", "curate"}
			if fail {
				want = []string{"import"}
				if err == nil || !strings.Contains(err.Error(), "curation waits for the agents' records") {
					t.Errorf("curation over a failed import: %v", err)
				}
				if st := m.Snapshot(); st.LastCurate != nil || !strings.Contains(st.LastCurateError, "the marks are lost") {
					t.Errorf("state after a failed import: last %v, error %q", st.LastCurate, st.LastCurateError)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(eng.calls, want) {
				t.Errorf("import failing %v: calls %v, want %v", fail, eng.calls, want)
			}
		}
		if !found {
			t.Fatal("no curate job")
		}
	}
}

// goneEngine is an engine made from a config file that a test removes;
// its syncs would pass, were they run.
type goneEngine struct {
	stuckEngine
	config string
}

func (e *goneEngine) Settings() Settings {
	return Settings{Sync: "@every 1h", Curate: "@every 1h", Sources: []string{"team"}, ConfigFile: e.config}
}

func (e *goneEngine) Sync(context.Context, SyncRequest) (*SyncResult, error) {
	return &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc"}}}, nil
}

// TestConfigGoneIsAFailedSync: once the config file is gone (the
// workspace deleted or moved), a sync refuses, and that refusal is a
// failed sync like any other: counted as a failure, and not ready, naming
// the file; a curation says why it did not run. Refused around the job,
// the monitor heard nothing, and /readyz said ready while nothing synced.
func TestConfigGoneIsAFailedSync(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "skillsync.yaml")
	if err := os.WriteFile(config, []byte("repositories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newMonitor(slog.New(slog.DiscardHandler))
	eng := &goneEngine{config: config}
	m.configured(eng.Settings())
	setup, err := jobs(eng, slog.New(slog.DiscardHandler), m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string) error {
		t.Helper()
		for _, j := range setup.Jobs {
			if j.Name() == name {
				return j.Run(context.Background())
			}
		}
		t.Fatalf("no job %s", name)
		return nil
	}
	if err := run(JobSync); err != nil {
		t.Fatal(err)
	}
	if got := m.Snapshot().NotReady(time.Now()); len(got) != 0 {
		t.Fatalf("after a sync that passed: NotReady %+v", got)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	if err := run(JobSync); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("a sync without its config: %v", err)
	}
	if err := run(JobCurate); err == nil {
		t.Error("a curation without its config did not fail")
	}
	st := m.Snapshot()
	if got := st.NotReady(time.Now()); len(got) == 0 || !strings.Contains(got[len(got)-1].Reason, config+" is gone") {
		t.Errorf("without its config: NotReady %+v", got)
	}
	if !strings.Contains(st.LastCurateError, config+" is gone") {
		t.Errorf("without its config: the last curation's error %q", st.LastCurateError)
	}
	var out strings.Builder
	if err := m.reg.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`skillsync_sync_runs_total{result="failure"} 1`, `skillsync_sync_runs_total{result="success"} 1`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, out.String())
		}
	}
}

// TestReloadDropsAGoneTargetsSeries: a target taken out of the config
// leaves the metrics as a source does: its series no longer exported,
// so a config whose target folders change does not grow the series
// without bound, and the metrics name only the config's targets.
func TestReloadDropsAGoneTargetsSeries(t *testing.T) {
	t.Parallel()
	m := newMonitor(slog.New(slog.DiscardHandler))
	m.configured(Settings{Sources: []string{"team"}, Targets: []string{".claude/skills", ".agents/skills"}})
	m.synced(SyncRequest{}, &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc"}}, Conflicts: map[string]int{".agents/skills": 2}}, nil, time.Second)
	m.configured(Settings{Sources: []string{"team"}, Targets: []string{".claude/skills"}})
	var out strings.Builder
	if err := m.reg.Write(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), `target=".agents/skills"`) || !strings.Contains(out.String(), `skillsync_target_conflicts_total{target=".claude/skills"} 0`) {
		t.Errorf("metrics after a reload took .agents/skills out:\n%s", out.String())
	}
}

// TestNoSourceReadyOnlyOnceSynced: a config with no source (only the
// workspace's own skills go to the targets) is not ready before a sync
// has passed, nor once syncs stop passing for three runs of the
// schedule: with no source to say "not synced yet", /readyz said ready
// from the start, and forever.
func TestNoSourceReadyOnlyOnceSynced(t *testing.T) {
	t.Parallel()
	m := newMonitor(slog.New(slog.DiscardHandler))
	m.configured(Settings{Sync: "@every 10m", Targets: []string{".claude/skills"}})
	if got := m.Snapshot().NotReady(time.Now()); len(got) != 1 || got[0].Reason != "not synced yet" {
		t.Errorf("before the first sync: NotReady %+v", got)
	}
	m.synced(SyncRequest{}, &SyncResult{}, nil, time.Second)
	if got := m.Snapshot().NotReady(time.Now()); len(got) != 0 {
		t.Errorf("after a sync that passed: NotReady %+v", got)
	}
	if got := m.Snapshot().NotReady(time.Now().Add(31 * time.Minute)); len(got) != 1 || !strings.Contains(got[0].Reason, "3 scheduled syncs since") {
		t.Errorf("three runs of the schedule later: NotReady %+v", got)
	}
}

// TestSyncOfASourceBroughtInPart: a source a sync brought in part (a
// skill it could not read kept its last good copy) is not ready, naming
// why, as skillsync status asks a person for it; the sync counts as
// partial, and the next sync that brings it whole makes it ready again.
func TestSyncOfASourceBroughtInPart(t *testing.T) {
	t.Parallel()
	m := newMonitor(slog.New(slog.DiscardHandler))
	m.configured(Settings{Sources: []string{"team"}})
	partly := errors.New("1 partly synced, of 1")
	m.synced(SyncRequest{}, &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc", Partial: "a skill was left out"}}}, partly, time.Second)
	st := m.Snapshot()
	got := st.NotReady(time.Now())
	if len(got) != 1 || got[0].Source != "team" || got[0].Reason != "last sync brought it in part: a skill was left out" {
		t.Errorf("NotReady %+v, want team brought in part", got)
	}
	if st.Sources["team"].Partial == "" || st.Sources["team"].LastError != "" {
		t.Errorf("state %+v", st.Sources["team"])
	}
	m.synced(SyncRequest{}, &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abd"}}}, nil, time.Second)
	if got := m.Snapshot().NotReady(time.Now()); len(got) != 0 {
		t.Errorf("after a sync that brought it whole: NotReady %+v", got)
	}
	var out strings.Builder
	if err := m.reg.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`skillsync_sync_runs_total{result="partial"} 1`, `skillsync_sync_runs_total{result="success"} 1`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, out.String())
		}
	}
}
