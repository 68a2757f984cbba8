package curator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// Job is work the scheduler runs on a cron schedule.
type Job struct {
	// Name is the config field the schedule comes from, for messages.
	Name string
	Spec string
	Run  func(ctx context.Context) error
}

// ScheduleError is a schedule that does not parse.
type ScheduleError struct {
	Field, Spec string
	Err         error
}

func (e *ScheduleError) Error() string {
	return fmt.Sprintf("schedule.%s %q does not parse: %v", e.Field, e.Spec, e.Err)
}

// parser reads standard five-field expressions and descriptors such as
// @every 15m and @daily; CRON_TZ= picks a time zone.
func parser() cron.Parser {
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

// ParseSchedule checks a schedule expression.
func ParseSchedule(field, spec string) error {
	if _, err := parser().Parse(spec); err != nil {
		return &ScheduleError{Field: field, Spec: spec, Err: err}
	}
	return nil
}

// Scheduler runs jobs on their schedules. A job never overlaps its own
// previous run, a panic in a job is recovered and logged, and every run
// logs one line with its duration and outcome.
type Scheduler struct {
	cron *cron.Cron
	log  *slog.Logger
}

// NewScheduler parses every job's schedule; ctx is handed to each run.
func NewScheduler(ctx context.Context, log *slog.Logger, jobs ...Job) (*Scheduler, error) {
	cl := cronLogger{log}
	c := cron.New(cron.WithParser(parser()), cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)))
	s := &Scheduler{cron: c, log: log}
	for _, j := range jobs {
		if _, err := c.AddFunc(j.Spec, s.wrap(ctx, j)); err != nil {
			return nil, &ScheduleError{Field: j.Name, Spec: j.Spec, Err: err}
		}
	}
	return s, nil
}

func (s *Scheduler) wrap(ctx context.Context, j Job) func() {
	return func() {
		if ctx.Err() != nil {
			return
		}
		RunLogged(ctx, s.log, j)
	}
}

// RunLogged runs a job once and logs its outcome, recovering a panic.
func RunLogged(ctx context.Context, log *slog.Logger, j Job) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			log.Error("job panicked", "job", j.Name, "panic", fmt.Sprint(r), "duration_ms", time.Since(start).Milliseconds())
		}
	}()
	err := j.Run(ctx)
	if err != nil {
		log.Error("job failed", "job", j.Name, "duration_ms", time.Since(start).Milliseconds(), "error", err.Error())
		return
	}
	log.Info("job done", "job", j.Name, "duration_ms", time.Since(start).Milliseconds())
}

// Start begins scheduling.
func (s *Scheduler) Start() { s.cron.Start() }

// Stop stops scheduling and waits for running jobs to return.
func (s *Scheduler) Stop() { <-s.cron.Stop().Done() }

// cronLogger feeds robfig/cron's own messages (recovered panics, skipped
// runs) to slog.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug("cron: "+msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, "error", fmt.Sprint(err))...)
}
