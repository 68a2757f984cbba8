package main

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/daemon"
)

// parse runs a command line through newCmd and returns the options its
// run would have been called with; the command itself never runs.
func parse[O any](t *testing.T, newCmd func(*app, func(context.Context, *O) error) *cobra.Command, argv ...string) (*O, error) {
	t.Helper()
	var got *O
	a := &app{factory: factory{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}}
	cmd := newCmd(a, func(_ context.Context, o *O) error { got = o; return nil })
	// Never nil: cobra reads the test binary's own arguments for nil.
	cmd.SetArgs(append([]string{}, argv...))
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

func TestSyncFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		argv []string
		want syncOptions
	}{
		{nil, syncOptions{wait: skillsync.DefaultWait, jobs: skillsync.DefaultJobs}},
		{[]string{"--frozen", "--jobs", "2", "--wait", "2m"}, syncOptions{frozen: true, jobs: 2, wait: 2 * time.Minute}},
		{[]string{"--verify", "--prune-all"}, syncOptions{verify: true, pruneAll: true, wait: skillsync.DefaultWait, jobs: skillsync.DefaultJobs}},
		{[]string{"--check-stat"}, syncOptions{stat: true, wait: skillsync.DefaultWait, jobs: skillsync.DefaultJobs}},
	}
	for _, tt := range tests {
		got, err := parse(t, newSyncCommand, tt.argv...)
		if err != nil || !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("sync %v = %+v, %v; want %+v", tt.argv, got, err, tt.want)
		}
	}
	if _, err := parse(t, newSyncCommand, "extra"); exitCode(err) != exitUsage {
		t.Errorf("sync with an argument: %v, exit %d", err, exitCode(err))
	}
}

func TestUpdateFlagsMoveTheNamedSources(t *testing.T) {
	t.Parallel()
	got, err := parse(t, newUpdateCommand, "team", "docs", "--jobs", "1")
	if err != nil || !reflect.DeepEqual(got.sources, []string{"team", "docs"}) || got.sync.jobs != 1 {
		t.Errorf("update = %+v, %v", got, err)
	}
}

func TestReadSearchPromptFlags(t *testing.T) {
	t.Parallel()
	r, err := parse(t, newReadCommand, "pdf", "scripts/x.py", "--raw")
	if err != nil || *r != (readOptions{name: "pdf", file: "scripts/x.py", raw: true}) {
		t.Errorf("read = %+v, %v", r, err)
	}
	s, err := parse(t, newSearchCommand, "release", "notes", "--limit", "3", "--all")
	if err != nil || *s != (searchOptions{query: "release notes", limit: 3, all: true}) {
		t.Errorf("search = %+v, %v", s, err)
	}
	p, err := parse(t, newPromptCommand, "--format", "json", "--max-chars", "800", "--exclude-stale")
	if err != nil || *p != (promptOptions{format: "json", maxChars: 800, excludeStale: true}) {
		t.Errorf("prompt = %+v, %v", p, err)
	}
	if _, err := parse(t, newReadCommand); exitCode(err) != exitUsage {
		t.Errorf("read without a name exits %d", exitCode(err))
	}
}

func TestCurationFlags(t *testing.T) {
	t.Parallel()
	c, err := parse(t, newCurateCommand, "--dry-run", "--now", "2027-01-01T00:00:00Z", "--force")
	if err != nil || *c != (curateOptions{dryRun: true, now: "2027-01-01T00:00:00Z", force: true}) {
		t.Errorf("curate = %+v, %v", c, err)
	}
	u, err := parse(t, newUseCommand, "--view", "pdf")
	if err != nil || *u != (useOptions{name: "pdf", view: true}) {
		t.Errorf("use = %+v, %v", u, err)
	}
	unpin := func(a *app, runF func(context.Context, *pinOptions) error) *cobra.Command {
		return newPinCommand(a, false, runF)
	}
	p, err := parse(t, unpin, "pdf")
	if err != nil || *p != (pinOptions{name: "pdf", pinned: false}) {
		t.Errorf("unpin = %+v, %v", p, err)
	}
	v, err := parse(t, newVerifyCommand, "--repair", "--wait", "1s")
	if err != nil || !v.repair || v.sync.wait != time.Second {
		t.Errorf("verify = %+v, %v", v, err)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{usageError("bad"), exitUsage},
		{&skillsync.UsageError{Err: context.Canceled}, exitUsage},
		{reported(skillsync.ErrPartial), exitPartial},
		{&config.ArgError{Err: context.Canceled}, exitUsage},
		{&daemon.ScheduleError{Field: "sync", Spec: "x", Err: context.Canceled}, exitUsage},
		{fmt.Errorf("remove: %w", config.ErrNotFound), exitUsage},
		{&config.Error{File: "f"}, exitUsage},
		{reported(skillsync.ErrFailed), exitFailure},
		{&skillsync.FrozenError{}, exitFailure},
		{reported(errDifferences), exitFailure},
		{context.Canceled, exitFailure},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	if message(reported(errDifferences)) != "" {
		t.Error("a reported error is printed again")
	}
}

func TestUsageAndHookFlags(t *testing.T) {
	t.Parallel()
	got, err := parse(t, newUsageCommand, "import", "claude", "--since", "2026-01-31")
	if err != nil || *got != (usageImportOptions{agent: "claude", since: "2026-01-31"}) {
		t.Errorf("usage import = %+v, %v", got, err)
	}
	if _, err := parse(t, newUsageCommand, "import", "claude", "codex"); err == nil {
		t.Error("usage import with two agents parsed")
	}
	u, err := parse(t, newUseCommand, "--hook", "claude")
	if err != nil || *u != (useOptions{hook: "claude"}) {
		t.Errorf("use --hook = %+v, %v", u, err)
	}
	if _, err := parse(t, newUseCommand, "--hook", "claude", "pdf"); err == nil {
		t.Error("use --hook with a name parsed")
	}
	if _, err := parse(t, newUseCommand); err == nil {
		t.Error("use without a name parsed")
	}
	for in, want := range map[string]string{"2026-01-31": "2026-01-31T00:00:00Z", "2026-01-31T09:30:00+02:00": "2026-01-31T07:30:00Z", "": "0001-01-01T00:00:00Z"} {
		if got, err := parseSince(in); err != nil || got.Format(time.RFC3339) != want {
			t.Errorf("parseSince(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if _, err := parseSince("31/01/2026"); exitCode(err) != exitUsage {
		t.Errorf("a bad --since: %v", err)
	}
}
