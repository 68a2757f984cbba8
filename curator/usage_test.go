package curator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func record(t *testing.T, s *Store, key string, view bool, from Source) bool {
	t.Helper()
	re, err := s.Record(context.Background(), Use{Copy: mustCopy(t, key), View: view, From: from, At: now, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return re
}

func TestRecordConcurrently(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	c := mustCopy(t, "marketplace:team/shared")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := s.Record(context.Background(), Use{Copy: c, View: g%2 == 0, From: FromMCP, At: now}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	u, _ := s.Load()
	if sk := u.Skills[c]; sk.UseCount != 200 || sk.ViewCount != 200 || !sk.LastUsedAt.Equal(now) || sk.LastSource != FromMCP {
		t.Errorf("counts = %+v", sk)
	}
}

// TestRecordAcrossProcesses: eight processes counting into one file lose
// no increment.
func TestRecordAcrossProcesses(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv("CURATOR_TEST_RECORD_DIR"); dir != "" {
		s := NewStore(dir)
		for i := 0; i < 40; i++ {
			if _, err := s.Record(context.Background(), Use{Copy: Copy{Layer: 3, Name: "shared"}, From: FromHook, At: now}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for p := 0; p < 8; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRecordAcrossProcesses$")
		cmd.Env = append(os.Environ(), "CURATOR_TEST_RECORD_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	u, err := NewStore(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Skills[mustCopy(t, "workspace/shared")].UseCount; got != 8*40 {
		t.Errorf("use_count = %d, want %d", got, 8*40)
	}
}

func TestUsageFileShape(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	record(t, s, "user:alice/pdf", false, FromCLI)
	if err := s.Seen(context.Background(), []Copy{mustCopy(t, "marketplace:team/pdf")}, now); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path())
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	skills := got["skills"].(map[string]any)
	alice := skills["user:alice/pdf"].(map[string]any)
	if got["version"] != 2.0 || alice["use_count"] != 1.0 || alice["last_source"] != "cli" || alice["state"] != "active" ||
		alice["last_used_at"] != "2026-11-30T12:00:00Z" || skills["marketplace:team/pdf"] == nil || len(skills) != 2 {
		t.Errorf("usage file:\n%s", data)
	}
	if !strings.Contains(string(data), `"marketplace:team/pdf": {`) || strings.Index(string(data), "marketplace:") > strings.Index(string(data), "user:") {
		t.Errorf("keys are not sorted:\n%s", data)
	}
}

// TestRecordReactivatesStale: a use of a stale copy makes it active at
// once and says so in the audit log.
func TestRecordReactivatesStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := NewStore(dir)
	pdf := mustCopy(t, "workspace/pdf")
	if err := s.Update(context.Background(), func(u *Usage) error {
		u.SetState(pdf, Stale, now.Add(-time.Hour))
		u.SetState(mustCopy(t, "workspace/other"), Stale, now.Add(-time.Hour))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !record(t, s, "workspace/pdf", true, FromMCP) {
		t.Error("a view of a stale copy did not report a reactivation")
	}
	if record(t, s, "workspace/pdf", false, FromCLI) {
		t.Error("a use of an active copy reported a reactivation")
	}
	u, _ := s.Load()
	if u.StateOf(pdf) != Active || !u.Skills[pdf].StateSince.Equal(now) || u.StateOf(mustCopy(t, "workspace/other")) != Stale {
		t.Errorf("states = %+v", u.Skills)
	}
	events, _, err := NewAudit(dir).Read(time.Time{}, OpReactivated)
	if err != nil || len(events) != 1 || events[0].Target != "workspace/pdf" || events[0].From != "stale" ||
		events[0].To != "active" || events[0].Actor != "test" || !strings.Contains(events[0].Detail, "mcp") {
		t.Errorf("audit = %+v %v", events, err)
	}
}

func TestRecordRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	if _, err := s.Record(context.Background(), Use{Copy: Copy{Layer: 3, Name: "../x"}, From: FromCLI, At: now}); err == nil {
		t.Error("recorded a copy whose name leaves its directory")
	}
	if _, err := s.Record(context.Background(), Use{Copy: mustCopy(t, "workspace/x"), From: "email", At: now}); err == nil {
		t.Error("recorded a use from an unknown source")
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused use wrote the usage file")
	}
}

const v1File = `{"version":1,"skills":{
 "pdf":{"use_count":7,"view_count":2,"first_seen_at":"2026-01-01T00:00:00Z","last_used_at":"2026-03-01T00:00:00Z","state":"stale","state_since":"2026-02-01T00:00:00Z","pinned":true},
 "PDF":{"use_count":1,"view_count":0,"first_seen_at":"2025-12-01T00:00:00Z","state":"active","pinned":false},
 "notes":{"use_count":3,"view_count":0,"state":"active","pinned":false},
 "gone":{"use_count":9,"view_count":9,"state":"archived","pinned":false}},
 "curator":{"last_run_at":"2026-03-02T00:00:00Z","last_summary":"checked 3"}}
`

// TestMigrateVersion1: a version-1 file keyed by bare names reads through
// Resolve, is not written by a read, and the first write migrates it in
// place, keeping the old file once as .usage.json.v1.
func TestMigrateVersion1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := NewStore(dir)
	var warnings []string
	s.Warn = func(w string) { warnings = append(warnings, w) }
	resolved := map[string]string{"pdf": "user:alice/pdf", "PDF": "user:alice/pdf", "notes": "workspace/notes"}
	s.Resolve = func(name string) (Copy, bool) {
		key, ok := resolved[name]
		if !ok {
			return Copy{}, false
		}
		return mustCopy(t, key), true
	}
	if err := os.WriteFile(s.Path(), []byte(v1File), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	alice := mustCopy(t, "user:alice/pdf")
	if a := u.Skills[alice]; a == nil || a.UseCount != 8 || a.State != Stale || !a.Pinned || !a.FirstSeenAt.Equal(time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)) ||
		u.Skills[mustCopy(t, "workspace/notes")].UseCount != 3 || len(u.Skills) != 2 || u.Curator.LastSummary != "checked 3" {
		t.Errorf("loaded v1 = %+v", u.Skills)
	}
	if _, err := os.Lstat(s.Path() + ".v1"); !errors.Is(err, os.ErrNotExist) {
		t.Error("Load wrote .usage.json.v1")
	}
	record(t, s, "workspace/notes", false, FromHook)
	kept, _ := os.ReadFile(s.Path() + ".v1")
	if string(kept) != v1File {
		t.Errorf(".v1 holds %q", kept)
	}
	u, err = NewStore(dir).Load() // no Resolve needed any more
	if err != nil || u.Version != 2 || u.Skills[mustCopy(t, "workspace/notes")].UseCount != 4 || u.Skills[alice].UseCount != 8 {
		t.Errorf("migrated = %+v %v", u, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], ".usage.json.v1") {
		t.Errorf("warnings = %q", warnings)
	}
	// A second version-1 file (an old binary wrote one) migrates again, and
	// the first .v1 is kept as it was.
	if err := os.WriteFile(s.Path(), []byte(`{"version":1,"skills":{"notes":{"use_count":1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	record(t, s, "workspace/notes", false, FromCLI)
	if kept, _ := os.ReadFile(s.Path() + ".v1"); string(kept) != v1File {
		t.Errorf(".v1 was replaced: %q", kept)
	}
}

func TestVersion1WithoutResolve(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	if err := os.WriteFile(s.Path(), []byte(v1File), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Load(); err != nil || len(u.Skills) != 0 {
		t.Errorf("Load = %+v %v", u, err)
	}
	var ue *UnusableError
	if _, err := s.Record(context.Background(), Use{Copy: mustCopy(t, "workspace/notes"), From: FromCLI, At: now}); !errors.As(err, &ue) {
		t.Errorf("Record without Resolve = %v", err)
	}
	if data, _ := os.ReadFile(s.Path()); string(data) != v1File {
		t.Error("the version-1 file changed without a migration")
	}
}

func TestCorruptUsageIsSetAside(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"not json":      "{not json",
		"escaping key":  `{"version":2,"skills":{"workspace/../../victim":{"use_count":1}}}`,
		"bad v1 name":   `{"version":1,"skills":{"../victim":{"use_count":1}}}`,
		"unknown state": `{"version":2,"skills":{"workspace/a":{"state":"deleted"}}}`,
		"negative use":  `{"version":2,"skills":{"workspace/a":{"use_count":-5}}}`,
		"negative day":  `{"version":2,"skills":{"workspace/a":{"days":{"2026-12-01":{"views":-1}}}}}`,
		"negative v1":   `{"version":1,"skills":{"a":{"view_count":-1}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := NewStore(dir)
			var warnings []string
			s.Warn = func(w string) { warnings = append(warnings, w) }
			if err := os.WriteFile(s.Path(), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			u, err := s.Load()
			if !IsCorrupt(err) || u == nil || len(u.Skills) != 0 || !strings.Contains(err.Error(), s.Path()) {
				t.Fatalf("Load of a corrupt file = %v, %v", u, err)
			}
			record(t, s, "workspace/a", false, FromCLI)
			backups, _ := filepath.Glob(s.Path() + ".corrupt-*")
			if len(backups) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], backups[0]) {
				t.Fatalf("backups %v warnings %v", backups, warnings)
			}
			if data, _ := os.ReadFile(backups[0]); string(data) != content {
				t.Errorf("the backup holds %q", data)
			}
			if u, err := s.Load(); err != nil || u.Skills[mustCopy(t, "workspace/a")].UseCount != 1 {
				t.Errorf("fresh file = %+v %v", u, err)
			}
		})
	}
}

// TestUsageDirectoryIsAClearError: a directory where the usage file goes
// is not corrupt usage to set aside but an error naming the path, and
// nothing in it is touched.
func TestUsageDirectoryIsAClearError(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	if err := os.MkdirAll(filepath.Join(s.Path(), "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	u, err := s.Load()
	var ue *UnusableError
	if u != nil || !errors.As(err, &ue) || IsCorrupt(err) || !strings.Contains(err.Error(), s.Path()+" is a directory") {
		t.Errorf("Load = %v, %v", u, err)
	}
	if _, err := s.Record(context.Background(), Use{Copy: mustCopy(t, "workspace/a"), From: FromCLI, At: now}); !errors.As(err, &ue) {
		t.Errorf("Record = %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Path(), "inside")); err != nil {
		t.Error(err)
	}
}

// TestUsageSymlinkIsNotFollowed: a usage file planted as a link to a file
// outside the workspace is neither read nor written through.
func TestUsageSymlinkIsNotFollowed(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "victim.json")
	content := `{"version":2,"skills":{"workspace/a":{"use_count":41,"state":"active"}}}`
	if err := os.WriteFile(outside, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(outside, old, old); err != nil {
		t.Fatal(err)
	}
	s := NewStore(t.TempDir())
	if err := os.Symlink(outside, s.Path()); err != nil {
		t.Fatal(err)
	}
	var ue *UnusableError
	if u, err := s.Load(); u != nil || !errors.As(err, &ue) || !strings.Contains(fmt.Sprint(err), s.Path()+" is a symbolic link") {
		t.Errorf("Load = %v, %v", u, err)
	}
	_, err := s.Record(context.Background(), Use{Copy: mustCopy(t, "workspace/a"), From: FromCLI, At: now})
	if err == nil || !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("Record through a link = %v", err)
	}
	data, _ := os.ReadFile(outside)
	info, _ := os.Stat(outside)
	if string(data) != content || !info.ModTime().Equal(old) || info.Mode().Perm() != 0o600 {
		t.Errorf("the file behind the link changed: %q %v %v", data, info.ModTime(), info.Mode())
	}
	if target, err := os.Readlink(s.Path()); err != nil || target != outside {
		t.Errorf("the link itself was replaced: %q %v", target, err)
	}
}

// The version a file names decides how it is read, whether or not its
// records would decode as this version's.
func TestUsageVersionRouting(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		content  string
		unusable bool
		from     int
	}{
		"version 2":          {content: `{"version":2,"skills":{"workspace/a":{"use_count":3}}}`, from: 2},
		"no version":         {content: `{"skills":{}}`, from: 1},
		"version 1, empty":   {content: `{"version":1,"skills":{}}`, from: 1},
		"newer, fits":        {content: `{"version":3,"skills":{"workspace/a":{"use_count":3}}}`, unusable: true},
		"newer, other shape": {content: `{"version":3,"skills":[1,2]}`, unusable: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := NewStore(t.TempDir())
			if err := os.WriteFile(s.Path(), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			u, err := s.Load()
			var ue *UnusableError
			if tc.unusable {
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), "newer than this skillsync reads") {
					t.Fatalf("Load = %v, %v; want unusable", u, err)
				}
				return
			}
			if err != nil || u.from != tc.from {
				t.Fatalf("Load = %+v, %v; want read as version %d", u, err, tc.from)
			}
		})
	}
}

// A count at the largest int stays there: wrapped round, it would be
// written negative, and the next reader would set the whole file aside,
// pins and states with it.
func TestCountsDoNotWrap(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	c := mustCopy(t, "marketplace:team/pdf")
	pinned := mustCopy(t, "marketplace:team/notes")
	err := s.Update(context.Background(), func(u *Usage) error {
		sk := u.Skill(c)
		sk.UseCount, sk.ViewCount = math.MaxInt, math.MaxInt
		sk.Days = map[string]DayCount{now.UTC().Format(DayLayout): {Uses: math.MaxInt, Views: math.MaxInt}}
		u.Skill(pinned).Pinned = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, view := range []bool{false, true} {
		if _, err := s.Record(context.Background(), Use{Copy: c, View: view, From: FromCLI, At: now}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordAll(context.Background(), []Use{{Copy: c, From: FromImport, At: now}, {Copy: c, View: true, From: FromImport, At: now}}); err != nil {
		t.Fatal(err)
	}
	u, err := s.Load()
	if err != nil {
		t.Fatalf("the file no longer reads: %v", err)
	}
	sk := u.Skills[c]
	day := sk.Days[now.UTC().Format(DayLayout)]
	if sk.UseCount != math.MaxInt || sk.ViewCount != math.MaxInt || day.Uses != math.MaxInt || day.Views != math.MaxInt {
		t.Errorf("counts %d %d, day %+v, want all at the largest int", sk.UseCount, sk.ViewCount, day)
	}
	if !u.Skills[pinned].Pinned {
		t.Error("the pin was lost")
	}
}
