package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/lock"
)

// TestExitCodeOfSeveralErrors: an error holding several picks the most
// severe of them, in any order (2 over 1 over 3), and not whichever
// errors.Is finds first: a partial sync must not hide a failure beside
// it, nor a failure a bad config.
func TestExitCodeOfSeveralErrors(t *testing.T) {
	t.Parallel()
	partial := fmt.Errorf("%w (1 failed, 0 partly synced, of 2)", skillsync.ErrPartial)
	failure := errors.New("target is refused")
	usage := usageError("--jobs must be at least 1")
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"partial", partial, exitPartial},
		{"partial, reported", reported(partial), exitPartial},
		{"failure", failure, exitFailure},
		{"partial then failure", errors.Join(partial, failure), exitFailure},
		{"failure then partial", errors.Join(failure, reported(partial)), exitFailure},
		{"partial and frozen", errors.Join(reported(partial), &lock.FrozenError{Diff: []string{"x"}}), exitFailure},
		{"wrapped join", fmt.Errorf("sync: %w", errors.Join(partial, failure)), exitFailure},
		{"two partials", errors.Join(partial, reported(partial)), exitPartial},
		{"usage beside a failure", errors.Join(failure, usage, partial), exitUsage},
		{"a hook's failure is 1 whatever", hookFailure(errors.Join(usage, partial)), exitFailure},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSyncOutcomeOfAStop: a sync stopped by a signal says the stop alone
// (interrupted): the sources it did not reach failed for that, and a
// partial beside it would add a second, misleading reason.
func TestSyncOutcomeOfAStop(t *testing.T) {
	t.Parallel()
	r := skillsync.SyncReport{Sources: []skillsync.SourceReport{{Source: "a", Status: skillsync.StatusFailed, Error: "context canceled"}, {Source: "b"}}}
	stop := fmt.Errorf("write cache: %w", context.Canceled)
	if got := syncOutcome(&r, stop); got != stop || message(got) != stop.Error() {
		t.Errorf("a stopped sync's outcome: %v, want %v alone", got, stop)
	}
	refused := errors.New("target refused")
	got := syncOutcome(&r, refused)
	if exitCode(got) != exitFailure || !slices.Equal(outcomeNames(got), []string{"error", "partial"}) {
		t.Errorf("a refusal beside a failed source: exit %d, outcomes %q", exitCode(got), outcomeNames(got))
	}
}
