package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logs collects a daemon's JSON log lines.
type logs struct {
	mu    sync.Mutex
	lines []map[string]any
}

func (l *logs) Write(p []byte) (int, error) {
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, m)
	return len(p), nil
}

func (l *logs) count(msg, job string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.lines {
		if m["msg"] == msg && (job == "" || m["job"] == job) {
			n++
		}
	}
	return n
}

func (l *logs) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitFor polls cond; the deadline only keeps a broken test from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// start runs d in the background and returns a stop function that
// cancels it and returns Run's error.
func start(t *testing.T, d *Daemon) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func setup(jobs ...Job) func(context.Context) (Setup, error) {
	return func(context.Context) (Setup, error) { return Setup{Jobs: jobs, Attrs: []any{"config", "test"}}, nil }
}

// gate is a job that blocks each run until released, counting runs and
// the most that ran at once.
type gate struct {
	mu             sync.Mutex
	runs, now, max int
	release        chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) run(ctx context.Context) error {
	g.mu.Lock()
	g.runs++
	g.now++
	g.max = max(g.max, g.now)
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.now--; g.mu.Unlock() }()
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return nil
}

func (g *gate) counts() (runs, most int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.runs, g.max
}

// TestScheduledRunsNeverOverlap: while a run is blocked, the schedule's
// ticks are skipped, never started beside it.
func TestScheduledRunsNeverOverlap(t *testing.T) {
	t.Parallel()
	var l logs
	g := newGate()
	d := New(Options{Load: setup(NewJob("slow", "@every 1s", g.run)), Logger: l.logger()})
	stop := start(t, d)
	waitFor(t, "two skipped ticks", func() bool { return l.count("job still running; skipped this run", "slow") >= 2 })
	if runs, most := g.counts(); runs != 1 || most != 1 {
		t.Errorf("%d runs, at most %d at once; want 1 and 1", runs, most)
	}
	close(g.release)
	waitFor(t, "a run after the release", func() bool { r, _ := g.counts(); return r >= 2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, most := g.counts(); most != 1 {
		t.Errorf("at most %d at once", most)
	}
}

// TestTriggerDuringARunRunsOnceMore: triggers during a run fold into one
// more run after it, never beside it.
func TestTriggerDuringARunRunsOnceMore(t *testing.T) {
	t.Parallel()
	var l logs
	g := newGate()
	d := New(Options{Load: setup(NewJob("import", "", g.run)), Logger: l.logger(), AtStart: []string{"import"}})
	stop := start(t, d)
	waitFor(t, "the first run", func() bool { r, _ := g.counts(); return r == 1 })
	for i := 0; i < 5; i++ {
		if err := d.Trigger("import"); err != nil {
			t.Fatal(err)
		}
	}
	g.release <- struct{}{}
	waitFor(t, "the pending run", func() bool { r, _ := g.counts(); return r == 2 })
	g.release <- struct{}{}
	waitFor(t, "two runs done", func() bool { return l.count("job done", "import") == 2 })
	if runs, most := g.counts(); runs != 2 || most != 1 {
		t.Errorf("%d runs, at most %d at once; want 2 and 1", runs, most)
	}
	if err := d.Trigger("nope"); err == nil || !strings.Contains(err.Error(), `no job named "nope"`) {
		t.Errorf("Trigger of an unknown job = %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestAPanickingJobIsLoggedAndRunsAgain(t *testing.T) {
	t.Parallel()
	var l logs
	d := New(Options{Load: setup(NewJob("boom", "", func(context.Context) error { panic("job exploded") }),
		NewJob("fails", "", func(context.Context) error { return errors.New("no network") })), Logger: l.logger(), AtStart: []string{"boom", "fails"}})
	stop := start(t, d)
	waitFor(t, "the first panic", func() bool { return l.count("job panicked", "boom") == 1 })
	if err := d.Trigger("boom"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second panic", func() bool { return l.count("job panicked", "boom") == 2 })
	waitFor(t, "the failure", func() bool { return l.count("job failed", "fails") == 1 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.lines {
		if m["msg"] == "job panicked" && m["panic"] != "job exploded" || m["msg"] == "job failed" && m["error"] != "no network" {
			t.Errorf("log line %v", m)
		}
	}
}

// TestStopCancelsAndWaits: cancelling Run cancels the running job's
// context and returns only once the job returned.
func TestStopCancelsAndWaits(t *testing.T) {
	t.Parallel()
	var l logs
	var mu sync.Mutex
	finished := false
	running := make(chan struct{})
	job := NewJob("sync", "@every 1h", func(ctx context.Context) error {
		close(running)
		<-ctx.Done()
		mu.Lock()
		finished = true
		mu.Unlock()
		return ctx.Err()
	})
	d := New(Options{Load: setup(job), Logger: l.logger(), AtStart: []string{"sync"}})
	stop := start(t, d)
	// Stopped once the job runs: a stop that comes first may, rightly,
	// never start it.
	select {
	case <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("the job given at start never ran")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !finished || l.count("daemon stopped", "") != 1 || l.count("job failed", "sync") != 1 {
		t.Errorf("finished %v, logs %v", finished, l.lines)
	}
	if err := d.Trigger("sync"); err != nil {
		t.Errorf("Trigger after stop = %v", err)
	}
}

// TestReload: a reload that fails keeps the old jobs; one that works
// swaps them, keeping a job's slot across the swap.
func TestReload(t *testing.T) {
	t.Parallel()
	var l logs
	reload := make(chan struct{})
	var mu sync.Mutex
	version := 1
	var runs []string
	job := func(tag string) Job {
		return NewJob("sync", "@every 1h", func(context.Context) error {
			mu.Lock()
			runs = append(runs, tag)
			mu.Unlock()
			return nil
		})
	}
	load := func(context.Context) (Setup, error) {
		mu.Lock()
		defer mu.Unlock()
		switch version {
		case 1:
			return Setup{Jobs: []Job{job("old")}}, nil
		case 2:
			return Setup{}, errors.New("line 2: bad config")
		case 3:
			return Setup{Jobs: []Job{job("new"), NewJob("curate", "at three", nil)}}, nil
		}
		return Setup{Jobs: []Job{job("new"), NewJob("import", "", func(context.Context) error { return nil })}, Attrs: []any{"config", "v4"}}, nil
	}
	d := New(Options{Load: load, Logger: l.logger(), Reload: reload})
	stop := start(t, d)
	waitFor(t, "the daemon to start", func() bool { return l.count("daemon started", "") == 1 })
	for v := 2; v <= 4; v++ {
		mu.Lock()
		version = v
		mu.Unlock()
		reload <- struct{}{}
		if v < 4 {
			waitFor(t, "a failed reload", func() bool { return l.count("reload failed; keeping the old config", "") == v-1 })
			if err := d.Trigger("sync"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "a run of the old job", func() bool { return l.count("job done", "sync") == v-1 })
		}
	}
	waitFor(t, "the reload", func() bool { return l.count("config reloaded", "") == 1 })
	for _, name := range []string{"sync", "import"} {
		if err := d.Trigger(name); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the new jobs", func() bool { return l.count("job done", "import") == 1 && l.count("job done", "sync") == 3 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(runs, " ") != "old old new" {
		t.Errorf("runs = %v", runs)
	}
}

func TestBadScheduleAtStart(t *testing.T) {
	t.Parallel()
	err := Run(context.Background(), Options{Load: setup(NewJob("curate", "at three", nil))})
	var se *ScheduleError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `schedule.curate "at three" does not parse`) {
		t.Errorf("Run = %v", err)
	}
	if err := Run(context.Background(), Options{Load: func(context.Context) (Setup, error) { return Setup{}, errors.New("no config") }}); err == nil {
		t.Error("a failed Load did not end Run")
	}
}

func TestScheduleErrorsNameFieldAndExpression(t *testing.T) {
	t.Parallel()
	err := ParseSchedule("sync", "every fifteen minutes")
	if err == nil || !strings.Contains(err.Error(), `schedule.sync "every fifteen minutes" does not parse`) {
		t.Errorf("err = %v", err)
	}
	for _, ok := range []string{"@every 15m", "0 3 * * *", "CRON_TZ=Europe/Berlin 0 3 * * *", "@daily"} {
		if err := ParseSchedule("curate", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestSignalReload(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SIGHUP to send")
	}
	ch := SignalReload(ctx, syscall.SIGHUP)
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := self.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal("no reload after SIGHUP")
	}
}
