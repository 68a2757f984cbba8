package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/repository"
)

// importFailing is a workspace whose usage import fails, as one does once
// skills/.hooked.jsonl is removed.
type importFailing struct{ stuckEngine }

func (e *importFailing) Import(context.Context) ([]ImportResult, error) {
	return nil, errors.New("the hook's journal skills/.hooked.jsonl is gone: run skillsync usage import claude --since DATE")
}

// readyz gets /readyz of the daemon at addr.
func readyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// stateIn reads the state file at path, failing the test when it cannot.
func stateIn(t *testing.T, path string) *State {
	t.Helper()
	st, _, err := ReadState(context.Background(), path, path+".lock")
	if err != nil || st == nil {
		t.Fatalf("state %s: %v", path, err)
	}
	return st
}

// TestFailedImportIsInTheState: the import job's failure, and that of
// the import curation runs first, is written to the state file
// (last_import_error) for skillsync status, and a run that succeeds
// clears it. Like a failed curation it leaves the daemon ready. Before,
// the state had no word of it: an import that failed at every run was
// seen in the log alone.
func TestFailedImportIsInTheState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), ".daemon.json")
	m := newMonitor(slog.New(slog.DiscardHandler))
	m.writeStateTo(file)
	now := time.Now()
	m.update(func(s *State) { s.Sources = map[string]SourceState{"team": {LastSuccess: &now}} })
	eng := &importFailing{}
	_ = importJob(eng, "", m.log, m).Run(ctx)
	st := stateIn(t, file)
	if !strings.Contains(st.LastImportError, ".hooked.jsonl is gone") || st.LastImport != nil {
		t.Errorf("after a failed import the state says last_import_error %q, last_import %v", st.LastImportError, st.LastImport)
	}
	if nr := st.NotReady(now); len(nr) != 0 {
		t.Errorf("a failed import makes the daemon not ready, as a failed curation does not: %v", nr)
	}
	m.imported(nil, nil)
	if st := stateIn(t, file); st.LastImportError != "" || st.LastImport == nil {
		t.Errorf("an import that succeeded leaves last_import_error %q, last_import %v", st.LastImportError, st.LastImport)
	}
	if _, err := importThenCurate(ctx, eng, m.log, m); err == nil {
		t.Fatal("curation ran on a failed import")
	}
	if st := stateIn(t, file); !strings.Contains(st.LastImportError, ".hooked.jsonl is gone") {
		t.Errorf("the import curation runs first failed, and the state says %q", st.LastImportError)
	}
}

// TestConfigThatNoLongerLoadsIsNotReady: a config edited into one that
// does not load keeps the daemon on the config it read before; the state
// file says why (reload_error) and /readyz answers 503 naming the file and
// line, until a reload takes. Before, the daemon logged it once and stayed
// ready: an operator could not see that it ran a config the user no
// longer has.
func TestConfigThatNoLongerLoadsIsNotReady(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "skillsync.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfgFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("repositories: []\n")
	kinds, err := repository.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	synced := make(chan int, 16)
	reload := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done, addr := make(chan error, 1), make(chan string, 1)
	stateFile := filepath.Join(dir, ".daemon.json")
	gen := 0
	go func() {
		done <- Serve(ctx, Config{Reload: reload, Listen: "127.0.0.1:0", Serving: func(a string) { addr <- a },
			Open: func(context.Context) (Engine, error) {
				if _, err := config.Load(cfgFile, kinds); err != nil {
					return nil, err
				}
				gen++
				return &stateEngine{genEngine{config: cfgFile, gen: gen, synced: synced}, stateFile}, nil
			}})
	}()
	defer stopServing(t, cancel, done, synced)
	at := <-addr
	nextSync(t, synced, "no first sync")
	if code, body := readyz(t, at); code != http.StatusOK {
		t.Fatalf("/readyz after the first sync: %d %s", code, body)
	}
	write("repositories: []\nschedule: [\n")
	reload <- struct{}{}
	waitUntil(t, "the failed reload is not in the state", func() bool { return stateIn(t, stateFile).ReloadError != "" })
	code, body := readyz(t, at)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "skillsync.yaml") || !strings.Contains(body, "no longer loads") {
		t.Errorf("/readyz with a config that does not load: %d %s", code, body)
	}
	write("repositories: []\n")
	reload <- struct{}{}
	waitUntil(t, "a reload that took left the error in the state", func() bool { return stateIn(t, stateFile).ReloadError == "" })
}

// stateEngine is a genEngine that keeps a state file.
type stateEngine struct {
	genEngine
	stateFile string
}

func (e *stateEngine) Settings() Settings {
	st := e.genEngine.Settings()
	st.StateFile, st.LockFile = e.stateFile, e.stateFile+".lock"
	return st
}

// waitUntil polls ok until it holds, failing with what after 30 seconds.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// TestReloadRefusedForAJobsScheduleIsRecorded: a reload whose engine
// brings a job of its own with a schedule that does not parse (a fleet
// push's) is a failed reload as any other: reload_error says so. Before,
// it was refused only when scheduled, after the reload was taken for one
// that loaded.
func TestReloadRefusedForAJobsScheduleIsRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stateFile := filepath.Join(dir, ".daemon.json")
	synced := make(chan int, 16)
	reload := make(chan struct{}, 1)
	var spec atomic.Value
	spec.Store("@every 1h")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Config{Reload: reload,
			Open: func(context.Context) (Engine, error) {
				return &stateEngine{genEngine{gen: 1, synced: synced}, stateFile}, nil
			},
			Jobs: func(Engine) ([]Job, error) {
				return []Job{NewJob(JobFleetPush, spec.Load().(string), func(context.Context) error { return nil })}, nil
			}})
	}()
	defer stopServing(t, cancel, done, synced)
	nextSync(t, synced, "no first sync")
	spec.Store("not a schedule")
	reload <- struct{}{}
	waitUntil(t, "a reload refused for a job's schedule is not in the state", func() bool {
		return strings.Contains(stateIn(t, stateFile).ReloadError, `"not a schedule"`)
	})
}
