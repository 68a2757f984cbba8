package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// TestStatChecksOnItsFirstAndEveryNthSync: the daemon's sync trusts its
// records except on the first run and every n-th, which compare stat
// data; with 0 it never does.
func TestStatChecksOnItsFirstAndEveryNthSync(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		every int
		want  string
	}{{3, "SssSssS"}, {1, "SSSSSSS"}, {0, "sssssss"}} {
		var got []byte
		sync := func(req SyncRequest) func(context.Context) error {
			return func(context.Context) error {
				got = append(got, map[bool]byte{true: 'S', false: 's'}[req.StatCheck])
				return nil
			}
		}
		run := statChecked(tt.every, sync)
		for range 7 {
			_ = run(context.Background())
		}
		if string(got) != tt.want {
			t.Errorf("every %d: runs %s, want %s", tt.every, got, tt.want)
		}
	}
}

// genEngine is one load of a config file: its syncs say which load made
// them.
type genEngine struct {
	stuckEngine
	config string
	gen    int
	synced chan int
}

func (e *genEngine) Settings() Settings {
	return Settings{Sync: "@every 1s", Sources: []string{"team"}, ConfigFile: e.config}
}

func (e *genEngine) Sync(context.Context, SyncRequest) (*SyncResult, error) {
	e.synced <- e.gen
	return &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc"}}}, nil
}

// TestEditedConfigIsReloadedBeforeASync: a config edited while the
// daemon runs, without a SIGHUP (skillsync add, an editor), is loaded
// before the next sync; no sync runs on the config as it was. With the
// old config, that sync took out of the cache and the targets the source
// skillsync add had just brought in, and did so at every run.
func TestEditedConfigIsReloadedBeforeASync(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "skillsync.yaml")
	if err := os.WriteFile(config, []byte("repositories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	synced := make(chan int, 16)
	var opens atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logs := &skilltest.Buffer{}
	go func() {
		done <- Serve(ctx, Config{Logger: slog.New(slog.NewTextHandler(logs, nil)), Open: func(context.Context) (Engine, error) {
			return &genEngine{config: config, gen: int(opens.Add(1)), synced: synced}, nil
		}})
	}()
	defer stopServing(t, cancel, done, synced)
	if gen := <-synced; gen != 1 {
		t.Fatalf("the first sync ran on load %d", gen)
	}
	if err := os.WriteFile(config, []byte("repositories:\n  - name: extra\n    dir: extra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if gen := nextSync(t, synced, "no sync after the edit"); gen != 2 {
		t.Errorf("the sync after the edit ran on load %d, the config as it was", gen)
	}
	if got := logs.String(); !strings.Contains(got, "the config changed") || !strings.Contains(got, "config="+config) {
		t.Errorf("the daemon's lines do not say which config changed:\n%s", got)
	}
}

// readEngine is genEngine made as a loader makes one: it read its
// config, and says what it read (Settings.ConfigRead).
type readEngine struct {
	genEngine
	read os.FileInfo
}

func (e *readEngine) Settings() Settings {
	st := e.genEngine.Settings()
	st.ConfigRead = e.read
	return st
}

// TestConfigEditedWhileLoadedIsLoadedAgain: a config edited after the
// engine read it and before the daemon noted what it loaded (at start,
// and at a reload that finds a config where there was none) is loaded
// before the next sync. The daemon stat'ed the file once the engine was
// made, took the edited file for the one loaded, and ran on the config
// as it was until the next edit.
func TestConfigEditedWhileLoadedIsLoadedAgain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		edit int // the load after whose read the file is edited
		want []int
	}{
		{"at start", 1, []int{2}},
		{"at a reload that finds the config", 2, []int{1, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			config := filepath.Join(t.TempDir(), "skillsync.yaml")
			if err := os.WriteFile(config, []byte("repositories: []\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			synced := make(chan int, 16)
			var opens atomic.Int64
			reload := make(chan struct{}, 1)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- Serve(ctx, Config{Reload: reload, Open: func(context.Context) (Engine, error) {
					eng := &readEngine{genEngine: genEngine{gen: int(opens.Add(1)), synced: synced}}
					if eng.gen < tt.edit {
						return eng, nil // the built-in default: no config file
					}
					eng.config = config
					f, err := os.Open(config)
					if err != nil {
						return nil, err
					}
					defer f.Close()
					if eng.read, err = f.Stat(); err != nil {
						return nil, err
					}
					if _, err := io.ReadAll(f); err != nil {
						return nil, err
					}
					if eng.gen == tt.edit {
						if err := os.WriteFile(config, []byte("repositories:\n  - name: extra\n    dir: extra\n"), 0o644); err != nil {
							return nil, err
						}
					}
					return eng, nil
				}})
			}()
			defer stopServing(t, cancel, done, synced)
			for i, want := range tt.want {
				if i > 0 {
					reload <- struct{}{}
				}
				if gen := nextSync(t, synced, "no sync"); gen != want {
					t.Fatalf("sync %d ran on load %d, want %d: the edit made while load %d was noted was taken for loaded", i+1, gen, want, tt.edit)
				}
			}
		})
	}
}

// hourlyEngine is genEngine on an hourly schedule.
type hourlyEngine struct{ genEngine }

func (e *hourlyEngine) Settings() Settings {
	st := e.genEngine.Settings()
	st.Sync = "@every 1h"
	return st
}

// TestReloadSyncsAtOnce: a reload is followed by a sync on the new
// config, not an interval later: a source the reload added was "not
// synced yet", and /readyz 503, until the next scheduled sync.
func TestReloadSyncsAtOnce(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "skillsync.yaml")
	if err := os.WriteFile(config, []byte("repositories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	synced := make(chan int, 16)
	var opens atomic.Int64
	reload := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Config{Reload: reload, Open: func(context.Context) (Engine, error) {
			return &hourlyEngine{genEngine{config: config, gen: int(opens.Add(1)), synced: synced}}, nil
		}})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	if gen := <-synced; gen != 1 {
		t.Fatalf("the first sync ran on load %d", gen)
	}
	reload <- struct{}{}
	if gen := nextSync(t, synced, "no sync after the reload"); gen != 2 {
		t.Errorf("the sync after the reload ran on load %d", gen)
	}
}

// TestConfigBackAfterAFailedReloadIsLoaded: a config that was gone when
// a reload tried it (a checkout, a save by rename) and then comes back
// edited is loaded before the next sync, as any edit is: it is not taken
// for the file the daemon had loaded.
func TestConfigBackAfterAFailedReloadIsLoaded(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "skillsync.yaml")
	if err := os.WriteFile(config, []byte("repositories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	synced := make(chan int, 16)
	var opens, tries atomic.Int64
	reload := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Config{Reload: reload, Open: func(context.Context) (Engine, error) {
			tries.Add(1)
			if _, err := os.Stat(config); err != nil {
				return nil, err
			}
			return &genEngine{config: config, gen: int(opens.Add(1)), synced: synced}, nil
		}})
	}()
	defer stopServing(t, cancel, done, synced)
	if gen := <-synced; gen != 1 {
		t.Fatalf("the first sync ran on load %d", gen)
	}
	if err := os.Remove(config); err != nil {
		t.Fatal(err)
	}
	reload <- struct{}{}
	for deadline := time.Now().Add(30 * time.Second); tries.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reload was not tried")
		}
	}
	if err := os.WriteFile(config, []byte("repositories:\n  - name: extra\n    dir: extra\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if gen := nextSync(t, synced, "no sync after the config came back"); gen != 2 {
		t.Errorf("the sync after the config came back ran on load %d, the config as it was", gen)
	}
}

// overlapEngine has a push source, and counts the syncs it runs at once.
type overlapEngine struct {
	stuckEngine
	mu           sync.Mutex
	now, highest int
}

func (e *overlapEngine) PushSources() []string { return []string{"pg"} }

func (e *overlapEngine) Sync(context.Context, SyncRequest) (*SyncResult, error) {
	e.mu.Lock()
	e.now++
	e.highest = max(e.highest, e.now)
	e.mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	e.mu.Lock()
	e.now--
	e.mu.Unlock()
	return &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc"}}}, nil
}

// TestSyncsOfOneDaemonTakeTurns: a push source's sync that comes while
// the scheduled sync runs waits for it. At once, it waited on the
// cache's own lock, and when the scheduled sync outlasted the sync's wait
// (a slow remote holds it for its timeout) failed: a failure counted and
// /readyz 503, the daemon held up by itself.
func TestSyncsOfOneDaemonTakeTurns(t *testing.T) {
	t.Parallel()
	eng := &overlapEngine{}
	setup, err := jobs(eng, slog.New(slog.DiscardHandler), newMonitor(slog.New(slog.DiscardHandler)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, j := range setup.Jobs {
		if j.Name() == JobSync || j.Name() == PushJob("pg") {
			wg.Go(func() {
				if err := j.Run(context.Background()); err != nil {
					t.Errorf("%s: %v", j.Name(), err)
				}
			})
		}
	}
	wg.Wait()
	if eng.highest != 1 {
		t.Errorf("%d syncs ran at once", eng.highest)
	}
}

// turnEngine is one load of a config with a push source, pg, whose
// listener reports a change at once when notify is set; its syncs count
// how many of every load's run at once, the first one held until
// release is closed.
type turnEngine struct {
	stuckEngine
	gen     int
	notify  bool
	shared  *overlapCount
	release chan struct{}
}

type overlapCount struct {
	mu                  sync.Mutex
	now, highest, total int
}

func (e *turnEngine) PushSources() []string { return []string{"pg"} }

func (e *turnEngine) OpenListener(string, func(string)) (repository.Listener, error) {
	if !e.notify {
		return nil, nil
	}
	return changedListener{}, nil
}

func (e *turnEngine) Sync(ctx context.Context, _ SyncRequest) (*SyncResult, error) {
	c := e.shared
	c.mu.Lock()
	c.now++
	c.total++
	c.highest = max(c.highest, c.now)
	first := c.total == 1
	c.mu.Unlock()
	if first {
		select {
		case e.started <- struct{}{}:
		default:
		}
		select {
		case <-e.release:
		case <-ctx.Done():
		}
	}
	c.mu.Lock()
	c.now--
	c.mu.Unlock()
	return &SyncResult{Sources: []SourceResult{{Name: "team", Revision: "abc"}}}, nil
}

// changedListener reports one change at once, then listens until its
// context ends.
type changedListener struct{}

func (changedListener) Source() string { return "pg" }
func (changedListener) Sync(context.Context) (repository.Revision, error) {
	return "new", nil
}
func (changedListener) Skills(context.Context) ([]skill.Skill, []skill.Problem, error) {
	return nil, nil, nil
}
func (changedListener) Listen(ctx context.Context, changed func(repository.Revision)) error {
	changed("new")
	<-ctx.Done()
	return nil
}

// TestSyncsTakeTurnsAcrossAReload: the syncs of the engine a reload
// opened wait for a sync of the one before that still runs, as the syncs
// of one engine do (TestSyncsOfOneDaemonTakeTurns): a reload while the
// scheduled sync runs, and a push source's change reported meanwhile,
// ran both at once, the second held on the cache's lock and failing
// after its wait.
func TestSyncsTakeTurnsAcrossAReload(t *testing.T) {
	t.Parallel()
	shared := &overlapCount{}
	started, release := make(chan struct{}, 1), make(chan struct{})
	var opens atomic.Int64
	reload := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Config{Reload: reload, Debounce: time.Millisecond, Open: func(context.Context) (Engine, error) {
			gen := int(opens.Add(1))
			return &turnEngine{stuckEngine: stuckEngine{started: started}, gen: gen, notify: gen == 2, shared: shared, release: release}, nil
		}})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	<-started // the first sync runs, and is held
	reload <- struct{}{}
	// The new engine's push source reports a change: its sync is
	// triggered while the first still runs.
	time.Sleep(500 * time.Millisecond)
	close(release)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		shared.mu.Lock()
		total, highest := shared.total, shared.highest
		shared.mu.Unlock()
		if total >= 3 { // the first, the push source's, the reload's
			if highest != 1 {
				t.Errorf("%d syncs ran at once", highest)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d syncs ran, want 3", total)
		}
	}
}

// stopServing stops Serve and takes the syncs it reports until it
// returns, which it must without an error.
func stopServing(t *testing.T, cancel context.CancelFunc, done <-chan error, synced <-chan int) {
	t.Helper()
	cancel()
	for {
		select {
		case <-synced:
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
			return
		}
	}
}

// nextSync returns the load the next sync ran on, failing the test with
// none when no sync comes within 30 seconds.
func nextSync(t *testing.T, synced <-chan int, none string) int {
	t.Helper()
	select {
	case gen := <-synced:
		return gen
	case <-time.After(30 * time.Second):
		t.Fatal(none)
		return 0
	}
}
