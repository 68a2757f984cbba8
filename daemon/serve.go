package daemon

import (
	"context"
	"log/slog"
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
	// ones (a fleet push, say); nil adds none.
	Jobs func(Engine) ([]Job, error)
}

// Serve runs the daemon over the engines Open returns until ctx is done:
// the standard jobs (Jobs), a first sync at start, and a sync of each push
// source as soon as it changes. It returns nil once the running jobs
// ended, or at once the error of a first Open or of a schedule that does
// not parse (*ScheduleError).
func Serve(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	push := &pushWatch{log: log, debounce: cfg.Debounce}
	defer push.stop()
	var d *Daemon
	d = New(Options{
		Load: func(ctx context.Context) (Setup, error) {
			eng, err := cfg.Open(ctx)
			if err != nil {
				return Setup{}, err
			}
			setup, err := Jobs(eng, log)
			if err != nil {
				return Setup{}, err
			}
			if cfg.Jobs != nil {
				more, err := cfg.Jobs(eng)
				if err != nil {
					return Setup{}, err
				}
				setup.Jobs = append(setup.Jobs, more...)
			}
			push.restart(ctx, eng, d)
			return setup, nil
		},
		Reload:  cfg.Reload,
		AtStart: []string{JobSync},
		Logger:  log,
	})
	return d.Run(ctx)
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
	st := eng.Settings()
	for _, s := range [][2]string{{JobSync, st.Sync}, {JobCurate, st.Curate}, {JobImport, st.Import}} {
		if s[1] == "" {
			continue // run only when triggered
		}
		if err := ParseSchedule(s[0], s[1]); err != nil {
			return Setup{}, err
		}
	}
	jobs := []Job{
		NewJob(JobSync, st.Sync, statChecked(st.StatCheckEvery, func(req SyncRequest) func(context.Context) error {
			return syncJob(eng, req, log)
		})),
		NewJob(JobCurate, st.Curate, func(ctx context.Context) error { return curateRun(ctx, eng, log) }),
		ImportJob(eng, st.Import, log),
	}
	for _, name := range eng.PushSources() {
		jobs = append(jobs, NewJob(PushJob(name), "", syncJob(eng, SyncRequest{Only: []string{name}}, log)))
	}
	attrs := append(append([]any(nil), st.Attrs...), "sync", st.Sync, "curate", st.Curate, "import", st.Import)
	return Setup{Jobs: jobs, Attrs: attrs}, nil
}

// syncJob runs one kind of sync and logs what it did.
func syncJob(eng Engine, req SyncRequest, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		res, err := eng.Sync(ctx, req)
		if res == nil {
			return err
		}
		for _, w := range res.Warnings {
			log.Warn(w)
		}
		log.Info("synced", "added", res.Added, "updated", res.Updated, "removed", res.Removed,
			"files_written", res.FilesWritten, "failed_sources", res.Failed())
		return err
	}
}

func curateRun(ctx context.Context, eng Engine, log *slog.Logger) error {
	res, err := eng.Curate(ctx)
	if err != nil {
		return err
	}
	log.Info("curated", "checked", res.Checked, "changes", res.ChangeCount(), "skipped", res.Skipped, "archive_held", res.ArchiveHeld)
	return nil
}

// ImportJob is the job "import": on spec (schedule.import) it imports
// every known agent's records of eng's workspace, logging one line per
// agent. Run it before curation, so curation sees what agents did since
// the last import.
func ImportJob(eng Engine, spec string, log *slog.Logger) Job {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return NewJob(JobImport, spec, func(ctx context.Context) error {
		results, err := eng.Import(ctx)
		for _, r := range results {
			for _, u := range r.Unreadable {
				log.Warn("import passed over a record; it is tried again next time", "agent", r.Agent, "error", u)
			}
			log.Info("imported", "agent", r.Agent, "files", r.Files, "uses", r.Uses, "views", r.Views,
				"unknown", r.Unknown, "malformed", r.Malformed, "too_long", r.TooLong, "reactivated", r.Reactivated)
		}
		return err
	})
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
