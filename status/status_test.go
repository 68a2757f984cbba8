package status_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/status"
)

func TestBuild(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	target := filepath.Join(root, ".claude", "skills")
	if err := os.MkdirAll(filepath.Join(target, materialize.ConflictsName, "pdf-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	skilltest.WriteFile(t, filepath.Join(target, materialize.RecordName), `{"version":2,"skills":{}}`)
	now := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	used := now.Add(-3 * 24 * time.Hour)
	older := now.Add(-20 * 24 * time.Hour)
	u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{
		{Layer: layering.Workspace, Name: "a"}: {LastUsedAt: &used, State: curator.Active},
		{Layer: layering.Workspace, Name: "b"}: {LastUsedAt: &older, State: curator.Stale},
		{Layer: layering.Workspace, Name: "c"}: {State: curator.Archived},
	}}
	in := status.Input{Root: root, Config: filepath.Join(root, "skillsync.yaml"), CacheDir: filepath.Join(root, ".skills-cache"),
		DaemonFile: filepath.Join(root, "skills", ".daemon.json"), DaemonLockFile: filepath.Join(root, "skills", ".daemon.lock"),
		Sources: []status.Source{{Name: "team", Kind: "git"}, {Name: "db", Kind: "postgres"}}, Targets: []string{target},
		CurateSchedule: "@daily", Now: now,
		Usage:  func() (*curator.Usage, error) { return u, nil },
		Drafts: func(context.Context) (int, error) { return 2, nil },
		Check: func(context.Context) ([]status.Check, error) {
			return []status.Check{{Behind: true}, {Error: "no route"}}, nil
		}}
	st, err := status.Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if st.Daemon != nil || st.Drafts != 2 || st.Usage != (status.Usage{Used7d: 1, Used30d: 2}) || st.Curation.Stale != 1 || st.Curation.Archived != 1 {
		t.Errorf("status %+v", st)
	}
	if st.Curation.NextRun != nil {
		t.Errorf("next curation %v without a daemon to run it", st.Curation.NextRun)
	}
	if s := st.Sources[0]; s.Kind != "git" || s.Moved == nil || !*s.Moved || !s.CheckedAt.Equal(now) {
		t.Errorf("source team: %+v", s)
	}
	if len(st.Targets) != 1 || len(st.Targets[0].Conflicts) != 1 || !st.Targets[0].InSync {
		t.Errorf("targets %+v", st.Targets)
	}
	attention := strings.Join(st.Attention, "\n")
	for _, want := range []string{"source db fails: no route", "1 edited copy waits in " + materialize.ConflictsName,
		"source team has not been synced yet: run skillsync sync"} {
		if !strings.Contains(attention, want) {
			t.Errorf("attention lacks %q:\n%s", want, attention)
		}
	}

	// A check that fails as a whole needs a person, and the rest is shown;
	// usage and drafts that fail count nothing, and a usage record that
	// cannot be read needs a person: its counts would say nothing was used.
	in.Usage = func() (*curator.Usage, error) { return nil, errors.New("unreadable") }
	in.Drafts = func(context.Context) (int, error) { return 5, errors.New("unreadable") }
	in.Check = nil
	st, err = status.Build(context.Background(), in)
	if err != nil || st.Drafts != 0 || st.Usage.Used30d != 0 || st.Sources[0].Moved != nil {
		t.Errorf("without usage and drafts: %+v, %v", st, err)
	}
	if !slices.Contains(st.Attention, "the usage record cannot be read: unreadable") {
		t.Errorf("an unreadable usage record: %q", st.Attention)
	}
	in.Check = func(context.Context) ([]status.Check, error) { return nil, errors.New("offline") }
	if st, err := status.Build(context.Background(), in); err != nil || !slices.Contains(st.Attention, "the upstream check failed: offline") || st.Sources[0].Moved != nil {
		t.Errorf("a check that fails: %+v, %v", st, err)
	}
}

// TestBuildWithoutItsDaemon: what a daemon that has stopped last found of
// a source (an error, since mended by hand) needs no person; when it last
// synced the source stays true. A state file that cannot be read needs a
// person and hides nothing else.
func TestBuildWithoutItsDaemon(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	stateFile := filepath.Join(root, "skills", ".daemon.json")
	synced := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	skilltest.WriteFile(t, stateFile, `{"pid": 99999999, "started_at": "2026-03-01T00:00:00Z", "next_curate": "2030-01-01T00:00:00Z",
 "sources": {"team": {"last_attempt": "2026-03-09T01:00:00Z", "last_success": "2026-03-09T00:00:00Z", "last_error": "repository not found"}}}`)
	in := status.Input{Root: root, Config: filepath.Join(root, "skillsync.yaml"), CacheDir: filepath.Join(root, ".skills-cache"),
		DaemonFile: stateFile, DaemonLockFile: filepath.Join(root, "skills", ".daemon.lock"),
		Sources: []status.Source{{Name: "team", Kind: "git"}}, CurateSchedule: "@daily", Now: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
		Usage:  func() (*curator.Usage, error) { return &curator.Usage{}, nil },
		Drafts: func(context.Context) (int, error) { return 0, nil }}
	st, err := status.Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Sources[0]; s.Error != "" || s.SyncedAt == nil || !s.SyncedAt.Equal(synced) {
		t.Errorf("source team after its daemon stopped: %+v", s)
	}
	if attention := strings.Join(st.Attention, "\n"); strings.Contains(attention, "fails") {
		t.Errorf("attention for an error of a daemon that stopped:\n%s", attention)
	}
	if st.Daemon != nil || st.Curation.NextRun != nil {
		t.Errorf("daemon %+v, next curation %v: the stopped daemon's", st.Daemon, st.Curation.NextRun)
	}

	// With the daemon running, its findings and its next curation count.
	lock, err := flock.Acquire(context.Background(), in.DaemonLockFile, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st, err = status.Build(context.Background(), in)
	lock.Close()
	if err != nil || st.Sources[0].Error != "repository not found" || st.Curation.NextRun == nil || st.Curation.NextRun.Year() != 2030 {
		t.Errorf("with the daemon running: %+v, next curation %v, %v", st.Sources, st.Curation.NextRun, err)
	}

	skilltest.WriteFile(t, stateFile, `{"pid": 1, "sta`)
	st, err = status.Build(context.Background(), in)
	if err != nil {
		t.Fatalf("status over a truncated daemon state: %v", err)
	}
	if attention := strings.Join(st.Attention, "\n"); !strings.Contains(attention, "read daemon state "+stateFile) || len(st.Sources) != 1 {
		t.Errorf("attention over a truncated daemon state:\n%s", attention)
	}
}

// TestBuildNamesRefusedTargets: a target folder or AGENTS.md file every
// sync refuses (Input.Refusals) is named, the target marked refused and
// not in sync, without a look through its link; the rest stays as it
// was.
func TestBuildNamesRefusedTargets(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	linked, plain := filepath.Join(root, "home", ".claude", "skills"), filepath.Join(root, ".agents", "skills")
	refusals := map[string]error{
		linked:                             errors.New("target " + linked + " is reached through a symbolic link: point the target at /real/skills"),
		filepath.Join(root, "z-AGENTS.md"): errors.New("agents_md z-AGENTS.md: leads outside the workspace"),
		filepath.Join(root, "AGENTS.md"):   errors.New("agents_md AGENTS.md: leads outside the workspace"),
	}
	in := status.Input{Root: root, Config: filepath.Join(root, "skillsync.yaml"), CacheDir: filepath.Join(root, ".skills-cache"),
		DaemonFile: filepath.Join(root, "skills", ".daemon.json"), DaemonLockFile: filepath.Join(root, "skills", ".daemon.lock"),
		Targets: []string{linked, plain}, Now: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
		Usage:    func() (*curator.Usage, error) { return &curator.Usage{}, nil },
		Drafts:   func(context.Context) (int, error) { return 0, nil },
		Refusals: func() map[string]error { return refusals }}
	skilltest.WriteFile(t, filepath.Join(plain, materialize.RecordName), `{"version":2,"skills":{}}`)
	st, err := status.Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if tg := st.Targets[0]; tg.Dir != linked || tg.InSync || !strings.Contains(tg.Refused, "point the target at /real/skills") {
		t.Errorf("the refused target: %+v", tg)
	}
	if tg := st.Targets[1]; tg.Refused != "" || !tg.InSync {
		t.Errorf("the other target: %+v", tg)
	}
	want := []string{refusals[linked].Error(), "agents_md AGENTS.md: leads outside the workspace", "agents_md z-AGENTS.md: leads outside the workspace"}
	if !slices.Equal(st.Attention, want) {
		t.Errorf("attention:\n%q\nwant\n%q", st.Attention, want)
	}
}
