// Package daemon runs jobs (sync, curate, and whatever comes next: an
// import of agents' usage, a sync of one source asked for by a database
// notification) on cron schedules or on demand. A job never overlaps its
// own previous run, a panic in one is logged and the daemon goes on, a
// reload swaps the jobs without stopping, and a cancelled context stops
// scheduling and waits for running jobs. It parses no flags and reads no
// config: the caller's Load does.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/skillsync/skillsync/internal/cronspec"
)

// Job is work the daemon runs.
type Job interface {
	// Name identifies the job in logs, in Trigger and across reloads.
	Name() string
	// Schedule is a cron expression (five fields, descriptors such as
	// @every 15m and @daily, CRON_TZ= for a time zone); "" runs the job
	// only when triggered.
	Schedule() string
	// Run does the work once. ctx is cancelled when the daemon stops.
	Run(ctx context.Context) error
}

// NewJob returns a Job made of its three parts.
func NewJob(name, schedule string, run func(ctx context.Context) error) Job {
	return funcJob{name, schedule, run}
}

type funcJob struct {
	name, schedule string
	run            func(context.Context) error
}

func (j funcJob) Name() string                  { return j.name }
func (j funcJob) Schedule() string              { return j.schedule }
func (j funcJob) Run(ctx context.Context) error { return j.run(ctx) }

// Setup is what Load returns: the jobs, and what to log about where they
// come from (such as the config file) when the daemon starts or reloads.
type Setup struct {
	Jobs  []Job
	Attrs []any
}

// Options configure a daemon.
type Options struct {
	// Load returns the jobs. It is called once at start, where an error
	// ends Run, and again on every reload, where an error is logged and the
	// jobs before it keep running.
	Load func(ctx context.Context) (Setup, error)
	// Reload asks for a reload each time it receives; nil never reloads.
	// SignalReload makes one from SIGHUP.
	Reload <-chan struct{}
	// AtStart names jobs run once at start, before their first scheduled
	// time (the first sync).
	AtStart []string
	// AtReload names jobs run once after each reload that took (a sync,
	// so that what the new config says is in place now, not at the next
	// scheduled time).
	AtReload []string
	// Logger receives one line per job run, with its duration and outcome;
	// nil discards.
	Logger *slog.Logger
}

// ScheduleError is a schedule that does not parse.
type ScheduleError struct {
	Field, Spec string
	Err         error
}

func (e *ScheduleError) Error() string {
	return fmt.Sprintf("schedule.%s %q does not parse: %v", e.Field, e.Spec, e.Err)
}

func (e *ScheduleError) Unwrap() error { return e.Err }

// parser reads standard five-field expressions and descriptors such as
// @every 15m and @daily; CRON_TZ= picks a time zone.
func parser() cron.Parser { return cronspec.Parser() }

// ParseSchedule checks a schedule expression; field names it in the error
// (schedule.<field>).
func ParseSchedule(field, spec string) error {
	if err := cronspec.Check(spec); err != nil {
		return &ScheduleError{Field: field, Spec: spec, Err: err}
	}
	return nil
}

// SignalReload returns a channel that receives once for each of sigs (for
// a daemon, SIGHUP) until ctx is done. Call it before the first job runs,
// so a signal sent during the first sync is a reload, not the default
// action of the signal.
func SignalReload(ctx context.Context, sigs ...os.Signal) <-chan struct{} {
	in := make(chan os.Signal, 1)
	signal.Notify(in, sigs...)
	out := make(chan struct{}, 1)
	go func() {
		defer signal.Stop(in)
		for {
			select {
			case <-ctx.Done():
				return
			case <-in:
				select {
				case out <- struct{}{}:
				default: // a reload is already waiting; one is enough
				}
			}
		}
	}()
	return out
}

// Daemon runs jobs; Trigger asks for a run now.
type Daemon struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	ctx     context.Context // Run's, once it started
	runners map[string]*runner
	stopped bool
	running sync.WaitGroup
}

// runner is one job's slot: at most one run at a time, and one more
// pending when a trigger came in during a run.
type runner struct {
	job     Job
	running bool
	pending bool
}

// New returns a daemon that Run starts.
func New(opts Options) *Daemon {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Daemon{opts: opts, log: log, runners: map[string]*runner{}}
}

// Run is New(opts).Run(ctx).
func Run(ctx context.Context, opts Options) error { return New(opts).Run(ctx) }

// Run loads the jobs, runs the AtStart ones, schedules the rest, and
// reloads on every receive from Options.Reload, until ctx is done; then it
// stops scheduling, waits for the running jobs (whose ctx is cancelled
// too) and returns nil. A Load that fails at start, or a schedule that
// does not parse (*ScheduleError), is returned at once.
func (d *Daemon) Run(ctx context.Context) error {
	setup, err := d.opts.Load(ctx)
	if err != nil {
		return err
	}
	c, err := d.newCron(setup.Jobs)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.ctx = ctx
	d.install(setup.Jobs)
	d.mu.Unlock()
	d.log.Info("daemon started", setup.Attrs...)
	for _, name := range d.opts.AtStart {
		if err := d.Trigger(name); err != nil {
			d.log.Error("start job", "job", name, "error", err.Error())
		}
	}
	c.Start()
	for {
		select {
		case <-ctx.Done():
			d.log.Info("stopping: waiting for running jobs")
			<-c.Stop().Done()
			d.mu.Lock()
			d.stopped = true
			d.mu.Unlock()
			d.running.Wait()
			d.log.Info("daemon stopped")
			return nil
		case <-d.opts.Reload:
			if next, ok := d.reload(ctx); ok {
				<-c.Stop().Done()
				c = next
				c.Start()
				for _, name := range d.opts.AtReload {
					if err := d.Trigger(name); err != nil {
						d.log.Error("job after a reload", "job", name, "error", err.Error())
					}
				}
			}
		}
	}
}

// reload loads the jobs again and returns their schedule, not started;
// on failure the old jobs stay and it logs why.
func (d *Daemon) reload(ctx context.Context) (*cron.Cron, bool) {
	setup, err := d.opts.Load(ctx)
	if err != nil {
		d.log.Error("reload failed; keeping the old config", "error", err.Error())
		return nil, false
	}
	c, err := d.newCron(setup.Jobs)
	if err != nil {
		d.log.Error("reload failed; keeping the old config", "error", err.Error())
		return nil, false
	}
	d.mu.Lock()
	d.install(setup.Jobs)
	d.mu.Unlock()
	d.log.Info("config reloaded", setup.Attrs...)
	return c, true
}

// install makes jobs the current ones. A job that keeps its name keeps
// its slot, so a run of the old job and one of the new never overlap; a
// job that is gone finishes a run in progress and is not run again.
// d.mu is held.
func (d *Daemon) install(jobs []Job) {
	next := make(map[string]*runner, len(jobs))
	for _, j := range jobs {
		r, ok := d.runners[j.Name()]
		if !ok {
			r = &runner{}
		}
		r.job = j
		next[j.Name()] = r
	}
	d.runners = next
}

// newCron parses every job's schedule into a cron that fires them.
func (d *Daemon) newCron(jobs []Job) (*cron.Cron, error) {
	c := cron.New(cron.WithParser(parser()))
	for _, j := range jobs {
		if j.Schedule() == "" {
			continue
		}
		name := j.Name()
		if _, err := c.AddFunc(j.Schedule(), func() { d.fire(name, false) }); err != nil {
			return nil, &ScheduleError{Field: name, Spec: j.Schedule(), Err: err}
		}
	}
	return c, nil
}

// Trigger runs the named job now, unless it is running: then it runs once
// more when the run in progress ends (triggers that come in meanwhile are
// folded into that one run), so a request made during a run is never lost
// and never overlaps it. It returns an error for a job the daemon does not
// have, and does nothing before Run started or after it stopped.
func (d *Daemon) Trigger(name string) error {
	d.mu.Lock()
	_, ok := d.runners[name]
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("no job named %q", name)
	}
	d.fire(name, true)
	return nil
}

// fire starts a run of the named job unless one is running; a triggered
// fire then leaves a run pending, a scheduled one is skipped.
func (d *Daemon) fire(name string, triggered bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.runners[name]
	if !ok || d.stopped || d.ctx == nil || d.ctx.Err() != nil {
		return
	}
	if r.running {
		if triggered {
			r.pending = true
		} else {
			d.log.Debug("job still running; skipped this run", "job", name)
		}
		return
	}
	r.running = true
	d.running.Add(1)
	go d.loop(r)
}

// loop runs r's job, again while a trigger left a run pending.
func (d *Daemon) loop(r *runner) {
	defer d.running.Done()
	for {
		d.mu.Lock()
		job, ctx := r.job, d.ctx
		d.mu.Unlock()
		runLogged(ctx, d.log, job)
		d.mu.Lock()
		again := r.pending && !d.stopped && ctx.Err() == nil
		r.pending = false
		r.running = again
		d.mu.Unlock()
		if !again {
			return
		}
	}
}

// minor is the error of a job whose failure loses nothing and needs no
// one woken (a fleet push: the usage waits for the next): logged as a
// warning.
type minor struct{ error }

func (m minor) Unwrap() error { return m.error }

// runLogged runs a job once and logs its outcome, recovering a panic.
func runLogged(ctx context.Context, log *slog.Logger, j Job) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			log.Error("job panicked", "job", j.Name(), "panic", fmt.Sprint(r), "duration_ms", time.Since(start).Milliseconds())
		}
	}()
	if err := j.Run(ctx); err != nil {
		level := slog.LevelError
		if errors.As(err, new(minor)) {
			level = slog.LevelWarn
		}
		log.Log(ctx, level, "job failed", "job", j.Name(), "duration_ms", time.Since(start).Milliseconds(), "error", err.Error())
		return
	}
	log.Info("job done", "job", j.Name(), "duration_ms", time.Since(start).Milliseconds())
}
