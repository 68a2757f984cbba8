package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/daemon"
)

// Exit codes, as the README lists them. exitCode is the one place that
// picks them, from the error a command returns.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitPartial = 3
)

// exitCode decides the exit status of a command that returned err. An
// err that holds several errors (errors.Join; a sync's syncOutcome: a
// target refused while a source failed) exits with the most severe of
// them, whatever their order: bad usage (2) over failure (1) over
// partial (3).
func exitCode(err error) int {
	var he *hookErr
	if errors.As(err, &he) {
		return exitFailure
	}
	return severity(err)
}

// severity is exitCode but for a hook's failure.
func severity(err error) int {
	var ue *usageErr
	var se *skillsync.UsageError
	var ae *config.ArgError
	var sched *daemon.ScheduleError
	var le *daemon.ListenError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.As(err, &se), errors.As(err, &ae), errors.As(err, &sched), errors.As(err, &le), skillsync.IsConfig(err),
		errors.Is(err, config.ErrNotFound), errors.Is(err, config.ErrLastSkill):
		return exitUsage
	}
	// errors.Is finds ErrPartial in any branch of a joined error, which
	// would let a partial sync hide the failure beside it.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			code := exitFailure
			for i, part := range j.Unwrap() {
				if c := severity(part); i == 0 || rank(c) > rank(code) {
					code = c
				}
			}
			return code
		}
	}
	if errors.Is(err, skillsync.ErrPartial) {
		return exitPartial
	}
	return exitFailure
}

// rank orders exit codes by severity: success, partial, failure, usage.
func rank(code int) int {
	switch code {
	case exitOK:
		return 0
	case exitPartial:
		return 1
	case exitFailure:
		return 2
	}
	return 3
}

// usageErr is a command line that does not make sense: a bad flag value,
// a wrong number of arguments.
type usageErr struct{ err error }

func (e *usageErr) Error() string { return e.err.Error() }
func (e *usageErr) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &usageErr{err: fmt.Errorf(format, args...)}
}

// hookErr is a failure of a command run as an agent's hook (skillsync use
// --hook): whatever its cause it exits 1, never 2, which Claude Code takes
// for a blocking error and feeds to the model.
type hookErr struct{ err error }

func (e *hookErr) Error() string { return e.err.Error() }
func (e *hookErr) Unwrap() error { return e.err }

func hookFailure(err error) error { return &hookErr{err: err} }

// reportedErr is an error the command has already told the user about in
// its output (a sync report, verify's differences): it sets the exit
// status and prints nothing more.
type reportedErr struct{ err error }

func (e *reportedErr) Error() string { return e.err.Error() }
func (e *reportedErr) Unwrap() error { return e.err }

func reported(err error) error {
	if err == nil {
		return nil
	}
	return &reportedErr{err: err}
}

// Errors that end a command whose output already says why.
var (
	errDifferences = errors.New("the cache or a target differs from its records")
	errInvalid     = errors.New("a skill is not valid")
)

// message is what Main prints for err, "" for nothing.
func message(err error) string {
	if o, ok := err.(outcomes); ok {
		var lines []string
		for _, e := range o {
			if m := message(e); m != "" {
				lines = append(lines, m)
			}
		}
		if m := exitSaid(o); m != "" {
			lines = append(lines, m)
		}
		return strings.Join(lines, "\n")
	}
	var re *reportedErr
	if errors.As(err, &re) {
		return ""
	}
	msg := err.Error()
	if pid := skillsync.LockHolder(err); pid > 0 && !strings.Contains(msg, fmt.Sprint(pid)) {
		msg += fmt.Sprintf(" (held by pid %d)", pid)
	}
	return msg
}
