package syncrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
)

// recordRun opens the cache at root for one sync whose report has
// sources as given.
func recordRun(t *testing.T, root string, sources ...SourceReport) *Run {
	t.Helper()
	cache, err := materialize.OpenCache(context.Background(), root, time.Second, materialize.CheckRecord)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	r := &Run{Cache: cache, Report: NewReport()}
	r.Report.Sources = sources
	return r
}

func readSyncs(t *testing.T, root string) *Syncs {
	t.Helper()
	s, err := ReadSyncs(filepath.Join(root, materialize.SyncsName))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordSyncs: each sync notes when it tried each source, when one
// last succeeded and the last error; a failure keeps the last success,
// and a sync that failed as a whole succeeds no source. A sync kept at
// the locked revisions notes only the sources it moved, and an offline
// one none; a source gone from the config is dropped by the next full
// sync.
func TestRecordSyncs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t1, t2, t3 := time.Date(2026, 3, 9, 1, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 2, 0, 0, 0, time.UTC), time.Date(2026, 3, 9, 3, 0, 0, 0, time.UTC)
	r := recordRun(t, root, SourceReport{Source: "team"}, SourceReport{Source: "db"}, SourceReport{Source: "old"})
	r.RecordSyncs(t1, Options{}, nil)
	r.Cache.Close()

	r = recordRun(t, root, SourceReport{Source: "team", Error: "repository not found"}, SourceReport{Source: "db"})
	r.RecordSyncs(t2, Options{}, ErrPartial)
	r.Cache.Close()
	s := readSyncs(t, root)
	if team := s.Sources["team"]; !team.LastAttempt.Equal(t2) || !team.LastSuccess.Equal(t1) || team.LastError != "repository not found" {
		t.Errorf("team after a failure: %+v", team)
	}
	if db := s.Sources["db"]; !db.LastAttempt.Equal(t2) || !db.LastSuccess.Equal(t2) || db.LastError != "" {
		t.Errorf("db after a success: %+v", db)
	}
	if _, ok := s.Sources["old"]; ok {
		t.Errorf("a source gone from the config is kept: %+v", s.Sources)
	}

	// A target that failed: every source tried, none succeeded.
	r = recordRun(t, root, SourceReport{Source: "team"}, SourceReport{Source: "db"})
	r.RecordSyncs(t3, Options{}, errors.New("target .claude/skills: permission denied"))
	r.Cache.Close()
	if db := readSyncs(t, root).Sources["db"]; !db.LastAttempt.Equal(t3) || !db.LastSuccess.Equal(t2) {
		t.Errorf("db after a sync that failed as a whole: %+v", db)
	}

	// update db: team stays at its locked revision, untried.
	t4 := t3.Add(time.Hour)
	r = recordRun(t, root, SourceReport{Source: "team"}, SourceReport{Source: "db"})
	r.RecordSyncs(t4, Options{Locked: true, Move: []string{"db"}}, nil)
	r.RecordSyncs(t4.Add(time.Hour), Options{Offline: true}, nil)
	r.Cache.Close()
	s = readSyncs(t, root)
	if team, db := s.Sources["team"], s.Sources["db"]; !team.LastAttempt.Equal(t3) || !team.LastSuccess.Equal(t1) || !db.LastSuccess.Equal(t4) {
		t.Errorf("after update db and an offline sync: %+v", s.Sources)
	}
}

// TestRecordSyncsOverABadRecord: a record that does not parse, of
// another version, or a link in its place, is written anew with a
// warning, and the link's target is left as it was.
func TestRecordSyncsOverABadRecord(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 9, 1, 0, 0, 0, time.UTC)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.json")
	skilltest.WriteFile(t, elsewhere, `{"version": 1, "sources": {}}`)
	for _, c := range []struct {
		name, content, warning string
		link                   bool
	}{
		{name: "not JSON", content: `{"vers`, warning: "is corrupt"},
		{name: "a link", link: true, warning: "symbolic link"},
		{name: "a newer version", content: `{"version": 2}`, warning: "unknown version 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			file := filepath.Join(root, materialize.SyncsName)
			if c.link {
				if err := os.Symlink(elsewhere, file); err != nil {
					t.Fatal(err)
				}
			} else {
				skilltest.WriteFile(t, file, c.content)
			}
			r := recordRun(t, root, SourceReport{Source: "team"})
			r.RecordSyncs(now, Options{}, nil)
			if c.warning != "" && !strings.Contains(strings.Join(r.Report.Warnings, "\n"), c.warning) {
				t.Errorf("warnings lack %q: %q", c.warning, r.Report.Warnings)
			}
			if data, err := os.ReadFile(elsewhere); err != nil || string(data) != `{"version": 1, "sources": {}}` {
				t.Errorf("the link's target: %q, %v", data, err)
			}
			if team := readSyncs(t, root).Sources["team"]; !team.LastSuccess.Equal(now) {
				t.Errorf("team, written anew: %+v", team)
			}
		})
	}
}

// TestRecordSyncsLeavesANoOpAlone: a sync whose outcome is the one
// recorded writes nothing while the recorded times are under an hour
// old, so that a daemon's no-op syncs write no byte; a new outcome, or
// times an hour old, are written.
func TestRecordSyncsLeavesANoOpAlone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	t0 := time.Date(2026, 3, 9, 1, 0, 0, 0, time.UTC)
	steps := []struct {
		name    string
		at      time.Duration // after t0
		err     string        // of the source team
		whole   bool          // the sync failed as a whole
		written bool
	}{
		{"the first sync", 0, "", false, true},
		{"a no-op ten minutes later", 10 * time.Minute, "", false, false},
		{"a no-op an hour after the times recorded", 61 * time.Minute, "", false, true},
		{"a failure", 62 * time.Minute, "repository not found", false, true},
		{"the same failure", 70 * time.Minute, "repository not found", false, false},
		{"another failure", 71 * time.Minute, "timeout", false, true},
		// Its last success stays the one of 61 minutes.
		{"a sync that failed as a whole", 140 * time.Minute, "", true, true},
		{"a success, the last one over an hour old", 150 * time.Minute, "", false, true},
		{"a clock stepped back", 30 * time.Minute, "", false, true},
	}
	last := t0
	for _, st := range steps {
		at := t0.Add(st.at)
		r := recordRun(t, root, SourceReport{Source: "team", Error: st.err})
		var err error
		if st.whole {
			err = errors.New("a target could not be written")
		}
		r.RecordSyncs(at, Options{}, err)
		r.Cache.Close()
		if st.written {
			last = at
		}
		if got := readSyncs(t, root).Sources["team"]; !got.LastAttempt.Equal(last) || got.LastError != st.err {
			t.Errorf("%s: last_attempt %v error %q, want %v %q", st.name, got.LastAttempt, got.LastError, last, st.err)
		}
	}
}
