package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The names of the daemon's standard jobs. A push source's job is
// PushJob(source).
const (
	JobSync   = "sync"
	JobCurate = "curate"
	JobImport = "import"
)

// PushJob names the job that syncs one push source when it changes.
func PushJob(source string) string { return "sync:" + source }

// Config configures Serve.
type Config struct {
	// Open returns an engine over the current config. It is called at
	// start, where an error ends Serve, and at every reload, where an
	// error is logged and the old engine's jobs keep running.
	Open func(ctx context.Context) (Engine, error)
	// Reload asks for a reload each time it receives (SignalReload).
	Reload <-chan struct{}
	// Logger receives the daemon's lines; nil discards.
	Logger *slog.Logger
	// Debounce is how long the push listening gathers a source's changes
	// before it syncs it; 0 is DefaultDebounce.
	Debounce time.Duration
	// Jobs returns more jobs to run over an engine besides the standard
	// ones (a fleet push, named JobFleetPush, say); nil adds none.
	Jobs func(Engine) ([]Job, error)
	// Listen is the address of /metrics, /healthz and /readyz; "" takes
	// the config's (Settings.Listen), and with both "" none is served. A
	// port alone is on the loopback interface (ListenAddr).
	Listen string
	// Serving, when set, is told the address served once it listens.
	Serving func(addr string)
}

// Serve runs the daemon over the engines Open returns until ctx is done:
// the standard jobs (Jobs), a first sync at start, a sync of each push
// source as soon as it changes, and the metrics and health server when an
// address is given. While it runs it holds the workspace's lock file and
// keeps its state file (Settings) for skillsync status. It returns nil
// once the running jobs ended, or at once the error of a first Open, of a
// schedule that does not parse (*ScheduleError) or of an address it
// cannot serve (*ListenError).
func Serve(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := newMonitor(log)
	// A reload is asked for by the caller (SIGHUP), or by a sync that
	// finds the config edited since the daemon read it.
	reloads := make(chan struct{}, 1)
	watch := &configWatch{reload: reloads}
	// The syncs of every engine a reload opens take turns too: a sync of
	// the engine before may still run when the new one's begin.
	turns := make(chan struct{}, 1)
	eng, err := cfg.Open(ctx)
	if err != nil {
		return err
	}
	watch.loaded(eng.Settings())
	first, err := jobSetup(eng, cfg, log, m, watch, turns)
	if err != nil {
		return err
	}
	st := eng.Settings()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Bound before the workspace is held: a daemon that cannot serve
	// (the address in use) ends without writing the state file, which
	// keeps what the last daemon found for skillsync status.
	var ln net.Listener
	if addr := cmp.Or(cfg.Listen, st.Listen); addr != "" {
		if ln, err = listen(addr, log); err != nil {
			return err
		}
		m.update(func(s *State) { s.Listen = ln.Addr().String() })
	}
	if st.LockFile != "" {
		h := &hold{path: st.LockFile, stateFile: st.StateFile, m: m, log: log}
		h.take(ctx, true)
		holding, stop := context.WithCancel(ctx)
		wait := h.keep(holding)
		defer func() { stop(); wait() }()
	}
	// The sources are known before /readyz answers: with none it would
	// say ready before the first sync.
	m.configured(st)
	var served chan error
	if ln != nil {
		if cfg.Serving != nil {
			cfg.Serving(ln.Addr().String())
		}
		served = make(chan error, 1)
		go func() { served <- m.serveHTTP(ctx, ln) }()
	}
	push := &pushWatch{log: log, debounce: cfg.Debounce}
	defer push.stop()
	go forwardReloads(ctx, cfg.Reload, reloads)
	var d *Daemon
	d = New(Options{
		Load: func(ctx context.Context) (Setup, error) {
			if first != nil { // the engine Serve opened
				s := *first
				first = nil
				push.restart(ctx, eng, d)
				return s, nil
			}
			watch.reading()
			next, err := cfg.Open(ctx)
			if err != nil {
				m.reloaded(err)
				return Setup{}, err
			}
			watch.loaded(next.Settings())
			s, err := jobSetup(next, cfg, log, m, watch, turns)
			if err != nil {
				m.reloaded(err)
				return Setup{}, err
			}
			m.reloaded(nil)
			if l := next.Settings().Listen; l != st.Listen && cfg.Listen == "" {
				log.Warn("the metrics address changed in the config; it takes a restart", "listen", l)
			}
			m.configured(next.Settings())
			push.restart(ctx, next, d)
			return *s, nil
		},
		Reload:   reloads,
		AtStart:  []string{JobSync},
		AtReload: []string{JobSync},
		Logger:   log,
	})
	err = d.Run(ctx)
	cancel()
	if served != nil {
		if serr := <-served; serr != nil {
			log.Error("the metrics server stopped", "error", serr.Error())
		}
	}
	return err
}

// jobSetup is eng's jobs, the standard ones, the engine's own (Jobber)
// and cfg's, reporting to m, their syncs taking turns on one.
func jobSetup(eng Engine, cfg Config, log *slog.Logger, m *monitor, w *configWatch, one chan struct{}) (*Setup, error) {
	s, err := jobs(eng, log, m, w, one)
	if err != nil {
		return nil, err
	}
	var more []Job
	if j, ok := eng.(Jobber); ok {
		list, err := j.MoreJobs()
		if err != nil {
			return nil, err
		}
		more = append(more, list...)
	}
	if cfg.Jobs != nil {
		list, err := cfg.Jobs(eng)
		if err != nil {
			return nil, err
		}
		more = append(more, list...)
	}
	for _, j := range more {
		// Checked here, as the standard ones are: a reload refused later,
		// when the jobs are scheduled, would not be recorded as one.
		if j.Schedule() != "" {
			if err := ParseSchedule(j.Name(), j.Schedule()); err != nil {
				return nil, err
			}
		}
		if j.Name() == JobFleetPush {
			push := j
			j = NewJob(push.Name(), push.Schedule(), func(ctx context.Context) error {
				err := push.Run(ctx)
				m.pushed(err)
				if err != nil {
					// It fails alone: the usage waits for the next push.
					return minor{err}
				}
				return nil
			})
		}
		s.Jobs = append(s.Jobs, j)
	}
	return &s, nil
}

// Jobs returns the standard jobs over eng: sync and curate on their
// schedules, the usage import on its own, and for each push source a job
// without a schedule that syncs that source alone, the others staying at
// their locked revisions (which costs no network). The schedules are
// checked here, so that a config whose schedule does not parse is refused
// before anything is swapped.
func Jobs(eng Engine, log *slog.Logger) (Setup, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return jobs(eng, log, nil, nil, nil)
}

// jobs is Jobs reporting to m, unless nil, its syncs refusing a config
// edited since w read it, unless w is nil, and taking turns on one (nil:
// on one of their own).
func jobs(eng Engine, log *slog.Logger, m *monitor, w *configWatch, one chan struct{}) (Setup, error) {
	st := eng.Settings()
	for _, s := range [][2]string{{JobSync, st.Sync}, {JobCurate, st.Curate}, {JobImport, st.Import}} {
		if s[1] == "" {
			continue // run only when triggered
		}
		if err := ParseSchedule(s[0], s[1]); err != nil {
			return Setup{}, err
		}
	}
	if st.ConfigFile != "" {
		eng = present{eng, st.ConfigFile, w}
	}
	// The syncs of one engine (the scheduled one, a push source's) take
	// turns: at once, the second waited on the cache's lock, and failed
	// after the sync's wait, the daemon held up by itself.
	if one == nil {
		one = make(chan struct{}, 1)
	}
	list := []Job{
		NewJob(JobSync, st.Sync, statChecked(st.StatCheckEvery, func(req SyncRequest) func(context.Context) error {
			return syncJob(eng, req, log, m, one)
		})),
		NewJob(JobCurate, st.Curate, func(ctx context.Context) error {
			res, err := importThenCurate(ctx, eng, log, m)
			if m != nil {
				m.curated(res, err, NextRun(st.Curate, time.Now()))
			}
			return err
		}),
		importJob(eng, st.Import, log, m),
	}
	for _, name := range eng.PushSources() {
		list = append(list, NewJob(PushJob(name), "", syncJob(eng, SyncRequest{Only: []string{name}}, log, m, one)))
	}
	attrs := append(append([]any(nil), st.Attrs...), "sync", st.Sync, "curate", st.Curate, "import", st.Import)
	return Setup{Jobs: list, Attrs: attrs}, nil
}

// present is an engine that works only while the config it was made
// from is there: once the file is gone (the workspace deleted or moved),
// a sync would build a new workspace where the old one was. It refuses
// in the engine, not around the job, so that the refusal reaches the
// monitor as any failed sync or curation does: counted as a failure, and
// not ready, rather than a daemon that syncs nothing while /readyz says
// all is well.
type present struct {
	Engine
	config string
	watch  *configWatch // nil: no check of edits
}

// gone says why nothing runs while the config file is missing.
func (p present) gone() error {
	if _, err := os.Lstat(p.config); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the config %s is gone (was the workspace moved or deleted?): nothing runs until it is back; restore it, or stop the daemon", p.config)
	}
	return nil
}

func (p present) Sync(ctx context.Context, req SyncRequest) (*SyncResult, error) {
	if err := p.gone(); err != nil {
		return nil, err
	}
	if p.watch.changed() {
		return nil, errConfigEdited
	}
	return p.Engine.Sync(ctx, req)
}

// errConfigEdited is a sync not run because the config file changed
// since the daemon read it: with the old config it would undo the edit
// (take out the source skillsync add just brought in, bring back the one
// skillsync remove took out). The daemon reloads and syncs then.
var errConfigEdited = errors.New("the config changed since the daemon read it")

// configWatch knows the config file as the daemon last read it, so that
// a sync can tell an edit made since (without a SIGHUP) and ask for the
// reload that takes it.
type configWatch struct {
	reload chan<- struct{}
	mu     sync.Mutex
	file   string
	seen   os.FileInfo // nil: not there, or not known
}

// reading notes the file as it is now, before a reload reads it: an
// edit made while it loads is then an edit to the next sync.
func (w *configWatch) reading() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file != "" {
		w.seen, _ = os.Stat(w.file)
	}
}

// loaded notes the config of the engine just opened, as the engine read
// it (Settings.ConfigRead). An engine that does not say keeps what reading
// found before the read; a file the daemon had not seen is stat'ed now,
// after the read, which passes over an edit made in between.
func (w *configWatch) loaded(st Settings) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case st.ConfigRead != nil:
		w.file, w.seen = st.ConfigFile, st.ConfigRead
	case st.ConfigFile != w.file:
		w.file = st.ConfigFile
		w.seen, _ = os.Stat(st.ConfigFile)
	}
}

// changed reports whether the config file is another than the daemon
// last read (links followed: a ConfigMap's swap counts), asking for a
// reload when it is. One that cannot be read now is no edit: present
// says when it is gone, and the reload would fail. One back after a
// reload found it gone is.
func (w *configWatch) changed() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == "" {
		return false
	}
	now, err := os.Stat(w.file)
	if err != nil || w.seen != nil && os.SameFile(now, w.seen) && now.Size() == w.seen.Size() && now.ModTime().Equal(w.seen.ModTime()) {
		return false
	}
	select {
	case w.reload <- struct{}{}:
	default: // a reload is already asked for
	}
	return true
}

// forwardReloads passes each reload the caller asks for on to the
// daemon's channel until ctx ends.
func forwardReloads(ctx context.Context, in <-chan struct{}, out chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-in:
			if !ok {
				return
			}
			select {
			case out <- struct{}{}:
			default: // a reload is already waiting; one is enough
			}
		}
	}
}

func (p present) Curate(ctx context.Context) (*CurateResult, error) {
	if err := p.gone(); err != nil {
		return nil, err
	}
	return p.Engine.Curate(ctx)
}

func (p present) Import(ctx context.Context) ([]ImportResult, error) {
	if err := p.gone(); err != nil {
		return nil, err
	}
	return p.Engine.Import(ctx)
}

// syncOnce runs one sync; a panic in it is its error, so that the
// sync counts as failed and the daemon as not ready.
func syncOnce(ctx context.Context, eng Engine, req SyncRequest) (res *SyncResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("the sync panicked: %v", r)
		}
	}()
	return eng.Sync(ctx, req)
}

// syncJob runs one kind of sync, when no other sync over one holds it,
// and logs what it did.
func syncJob(eng Engine, req SyncRequest, log *slog.Logger, m *monitor, one chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case one <- struct{}{}:
			defer func() { <-one }()
		case <-ctx.Done():
			return ctx.Err() // stopped while another sync ran: this one never began
		}
		start := time.Now()
		res, err := syncOnce(ctx, eng, req)
		if errors.Is(err, errConfigEdited) {
			// Nothing ran, so nothing is counted: the reload syncs next.
			log.Info("the config changed since the daemon read it; reloading it, then syncing", "config", eng.Settings().ConfigFile)
			return nil
		}
		if m != nil {
			m.synced(req, res, err, time.Since(start))
		}
		if res == nil {
			return err
		}
		for _, w := range res.Warnings {
			log.Warn(w)
		}
		log.Info("synced", "added", res.Added, "updated", res.Updated, "removed", res.Removed, "repaired", res.Repaired,
			"files_written", res.FilesWritten, "failed_sources", res.Failed())
		return err
	}
}

// importThenCurate imports what agents did since the last import, then
// curates: a skill an agent used since would look idle, and once
// archived its use could not be recorded at all (an import records uses
// of the workspace's skills only). A failed import leaves the skills as
// they are, and says so.
func importThenCurate(ctx context.Context, eng Engine, log *slog.Logger, m *monitor) (*CurateResult, error) {
	if err := importRun(ctx, eng, log, m); err != nil {
		return nil, fmt.Errorf("curation waits for the agents' records, whose import failed: %w", err)
	}
	return curateRun(ctx, eng, log)
}

func curateRun(ctx context.Context, eng Engine, log *slog.Logger) (*CurateResult, error) {
	res, err := eng.Curate(ctx)
	if err != nil {
		return nil, err
	}
	log.Info("curated", "checked", res.Checked, "changes", res.ChangeCount(), "skipped", res.Skipped, "archive_held", res.ArchiveHeld)
	return res, nil
}

// ImportJob is the job "import": on spec (schedule.import) it imports
// every known agent's records of eng's workspace, logging one line per
// agent. Run it before curation, so curation sees what agents did since
// the last import.
func ImportJob(eng Engine, spec string, log *slog.Logger) Job {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return importJob(eng, spec, log, nil)
}

func importJob(eng Engine, spec string, log *slog.Logger, m *monitor) Job {
	return NewJob(JobImport, spec, func(ctx context.Context) error { return importRun(ctx, eng, log, m) })
}

// importRun imports every known agent's records once, logging one line
// per agent.
func importRun(ctx context.Context, eng Engine, log *slog.Logger, m *monitor) error {
	results, err := eng.Import(ctx)
	if m != nil {
		m.imported(results, err)
	}
	for _, r := range results {
		for _, u := range r.Unreadable {
			log.Warn("import passed over a record; it is tried again next time", "agent", r.Agent, "error", u)
		}
		log.Info("imported", "agent", r.Agent, "files", r.Files, "uses", r.Uses, "views", r.Views,
			"unknown", r.Unknown, "malformed", r.Malformed, "too_long", r.TooLong, "reactivated", r.Reactivated)
		if len(r.MalformedAt) > 0 {
			log.Warn("import skipped lines that did not parse", "agent", r.Agent, "malformed", r.Malformed, "first_at", r.MalformedAt)
		}
	}
	return err
}

// statChecked runs sync with a stat check of every cached and target file
// on its first run and every every-th run after (never when every is 0):
// a sync with nothing new trusts its records, and this is how a daemon
// still notices files changed behind its back.
func statChecked(every int, sync func(SyncRequest) func(context.Context) error) func(context.Context) error {
	plain, checked := sync(SyncRequest{}), sync(SyncRequest{StatCheck: true})
	var runs atomic.Int64
	return func(ctx context.Context) error {
		n := runs.Add(1) - 1
		if every > 0 && n%int64(every) == 0 {
			return checked(ctx)
		}
		return plain(ctx)
	}
}
