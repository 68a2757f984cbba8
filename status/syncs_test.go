package status_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/status"
)

// syncsInput is a workspace of the sources team and db, with a daemon
// state file that found team failing at 01:00 and db synced at 02:00.
func syncsInput(t *testing.T) status.Input {
	t.Helper()
	root := t.TempDir()
	stateFile := filepath.Join(root, "skills", ".daemon.json")
	skilltest.WriteFile(t, stateFile, `{"pid": 1, "started_at": "2026-03-01T00:00:00Z", "sources": {
 "team": {"last_attempt": "2026-03-09T01:00:00Z", "last_success": "2026-03-08T00:00:00Z", "last_error": "daemon: repository not found"},
 "db": {"last_attempt": "2026-03-09T02:00:00Z", "last_success": "2026-03-09T02:00:00Z", "moved": true}}}`)
	return status.Input{Root: root, Config: filepath.Join(root, "skillsync.yaml"), CacheDir: filepath.Join(root, ".skills-cache"),
		DaemonFile: stateFile, DaemonLockFile: filepath.Join(root, "skills", ".daemon.lock"),
		Sources: []status.Source{{Name: "team", Kind: "git"}, {Name: "db", Kind: "postgres"}}, Now: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
		Usage:  func() (*curator.Usage, error) { return &curator.Usage{}, nil },
		Drafts: func(context.Context) (int, error) { return 0, nil }}
}

// holdDaemon takes the daemon's lock for the test, as a running daemon does.
func holdDaemon(t *testing.T, in status.Input) {
	t.Helper()
	lock, err := flock.Acquire(context.Background(), in.DaemonLockFile, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
}

func build(t *testing.T, in status.Input) *status.Workspace {
	t.Helper()
	st, err := status.Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func at(s string) time.Time {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return tm
}

// TestBuildMergesSyncsByHand: per source, the later try of the daemon's
// and of the syncs by hand says how it fares, the later success when it
// synced; a source the config no longer has is not shown.
func TestBuildMergesSyncsByHand(t *testing.T) {
	t.Parallel()
	in := syncsInput(t)
	holdDaemon(t, in)
	// By hand: team mended at 03:00, after the daemon's failure; db failed
	// at 01:30, before the daemon's success.
	skilltest.WriteFile(t, filepath.Join(in.CacheDir, materialize.SyncsName), `{"version": 1, "sources": {
 "team": {"last_attempt": "2026-03-09T03:00:00Z", "last_success": "2026-03-09T03:00:00Z"},
 "db": {"last_attempt": "2026-03-09T01:30:00Z", "last_success": "2026-03-07T00:00:00Z", "last_error": "hand: connection refused"},
 "gone": {"last_attempt": "2026-03-09T04:00:00Z", "last_error": "hand: gone from the config"}}}`)
	st := build(t, in)
	team, db := st.Sources[0], st.Sources[1]
	if team.Error != "" || !team.CheckedAt.Equal(at("2026-03-09T03:00:00Z")) || !team.SyncedAt.Equal(at("2026-03-09T03:00:00Z")) || team.Moved != nil {
		t.Errorf("team, mended by hand after the daemon failed: %+v", team)
	}
	if db.Error != "" || !db.CheckedAt.Equal(at("2026-03-09T02:00:00Z")) || !db.SyncedAt.Equal(at("2026-03-09T02:00:00Z")) || db.Moved == nil || !*db.Moved {
		t.Errorf("db, synced by the daemon after it failed by hand: %+v", db)
	}
	if len(st.Sources) != 2 || strings.Contains(strings.Join(st.Attention, "\n"), "fails") {
		t.Errorf("sources %+v, attention %q", st.Sources, st.Attention)
	}

	// The other way round: a failure by hand after the daemon's success
	// is the source's error; the daemon's failure after a success by hand
	// is too, and the success by hand is when it synced.
	skilltest.WriteFile(t, filepath.Join(in.CacheDir, materialize.SyncsName), `{"version": 1, "sources": {
 "team": {"last_attempt": "2026-03-09T00:30:00Z", "last_success": "2026-03-09T00:30:00Z"},
 "db": {"last_attempt": "2026-03-09T05:00:00Z", "last_success": "2026-03-07T00:00:00Z", "last_error": "hand: connection refused"}}}`)
	st = build(t, in)
	team, db = st.Sources[0], st.Sources[1]
	if team.Error != "daemon: repository not found" || !team.SyncedAt.Equal(at("2026-03-09T00:30:00Z")) {
		t.Errorf("team, failed by the daemon after a sync by hand: %+v", team)
	}
	if db.Error != "hand: connection refused" || !db.CheckedAt.Equal(at("2026-03-09T05:00:00Z")) || !db.SyncedAt.Equal(at("2026-03-09T02:00:00Z")) || db.Moved != nil {
		t.Errorf("db, failed by hand after the daemon synced it: %+v", db)
	}
	attention := strings.Join(st.Attention, "\n")
	for _, want := range []string{"source team fails: daemon: repository not found", "source db fails: hand: connection refused"} {
		if !strings.Contains(attention, want) {
			t.Errorf("attention lacks %q:\n%s", want, attention)
		}
	}
}

// TestBuildWithoutADaemonTakesSyncsByHand: with no daemon, the syncs by
// hand alone say how a source fares.
func TestBuildWithoutADaemonTakesSyncsByHand(t *testing.T) {
	t.Parallel()
	in := syncsInput(t)
	skilltest.WriteFile(t, filepath.Join(in.CacheDir, materialize.SyncsName), `{"version": 1, "sources": {
 "db": {"last_attempt": "2026-03-09T01:30:00Z", "last_success": "2026-03-07T00:00:00Z", "last_error": "hand: connection refused"}}}`)
	st := build(t, in)
	if team := st.Sources[0]; team.Error != "" || team.CheckedAt != nil {
		t.Errorf("team, failed only by a daemon that stopped: %+v", team)
	}
	if db := st.Sources[1]; db.Error != "hand: connection refused" || !db.SyncedAt.Equal(at("2026-03-09T02:00:00Z")) {
		t.Errorf("db, failed by hand: %+v", db)
	}
	if !strings.Contains(strings.Join(st.Attention, "\n"), "source db fails: hand: connection refused") {
		t.Errorf("attention: %q", st.Attention)
	}
}

// TestBuildRefusesABadRecordOfSyncs: a record of syncs that is not JSON,
// too large, of another version, or a symbolic link (to a record that
// would say team fails) is named for a person and left out; the daemon's
// findings are shown all the same.
func TestBuildRefusesABadRecordOfSyncs(t *testing.T) {
	t.Parallel()
	elsewhere := filepath.Join(t.TempDir(), "syncs.json")
	skilltest.WriteFile(t, elsewhere, `{"version": 1, "sources": {"db": {"last_attempt": "2030-01-01T00:00:00Z", "last_error": "followed the link"}}}`)
	for _, c := range []struct {
		name, content, want string
		link                bool
	}{
		{name: "not JSON", content: `{"version": 1, "sour`, want: "is corrupt"},
		{name: "too large", content: `{"version": 1, "sources": {}}` + strings.Repeat(" ", 1<<20), want: "is larger than skillsync reads"},
		{name: "a newer version", content: `{"version": 2, "sources": {"db": {"last_attempt": "2030-01-01T00:00:00Z", "last_error": "v2"}}}`,
			want: "unknown version 2, this skillsync reads version 1"},
		{name: "a link", link: true, want: "symbolic link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := syncsInput(t)
			holdDaemon(t, in)
			file := filepath.Join(in.CacheDir, materialize.SyncsName)
			if c.link {
				if err := os.MkdirAll(in.CacheDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(elsewhere, file); err != nil {
					t.Fatal(err)
				}
			} else {
				skilltest.WriteFile(t, file, c.content)
			}
			st := build(t, in)
			attention := strings.Join(st.Attention, "\n")
			if !strings.Contains(attention, "read the record of syncs "+file) || !strings.Contains(attention, c.want) {
				t.Errorf("attention does not name %s and %q:\n%s", file, c.want, attention)
			}
			if team, db := st.Sources[0], st.Sources[1]; team.Error != "daemon: repository not found" || db.Error != "" || !db.CheckedAt.Equal(at("2026-03-09T02:00:00Z")) {
				t.Errorf("sources beside a bad record: %+v", st.Sources)
			}
		})
	}
}
