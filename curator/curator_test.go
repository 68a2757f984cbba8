package curator

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(days int) *time.Time {
	t := now.Add(-time.Duration(days) * 24 * time.Hour)
	return &t
}

func TestPlan(t *testing.T) {
	p := DefaultPolicy()
	tests := []struct {
		name  string
		skill *SkillUsage
		layer string
		force bool
		want  string // "" for no change, else "from->to"
	}{
		{"fresh stays active", &SkillUsage{FirstSeenAt: ago(1), State: Active}, "workspace", false, ""},
		{"29 days idle stays active", &SkillUsage{FirstSeenAt: ago(29), State: Active}, "workspace", false, ""},
		{"45 days idle becomes stale", &SkillUsage{FirstSeenAt: ago(45), State: Active}, "workspace", false, "active->stale"},
		{"a recent view keeps it active", &SkillUsage{FirstSeenAt: ago(200), LastViewedAt: ago(10), State: Active}, "user", false, ""},
		{"120 days idle is archived", &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(120), State: Active}, "workspace", false, "active->archived"},
		{"stale 120 days is archived", &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(120), State: Stale, StateSince: ago(60)}, "marketplace", false, "stale->archived"},
		{"stale used again is active", &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(3), State: Stale, StateSince: ago(20)}, "workspace", false, "stale->active"},
		{"stale not used stays stale", &SkillUsage{FirstSeenAt: ago(50), State: Stale, StateSince: ago(5)}, "workspace", false, ""},
		{"pinned never changes", &SkillUsage{FirstSeenAt: ago(500), State: Active, Pinned: true}, "workspace", false, ""},
		{"archived stays archived", &SkillUsage{FirstSeenAt: ago(500), State: Archived, StateSince: ago(10)}, "marketplace", false, ""},
		{"a layer not curated is left", &SkillUsage{FirstSeenAt: ago(500), State: Active}, "global", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUsage()
			u.Skills["s"] = tt.skill
			plan := p.Plan(u, []Candidate{{Name: "s", Layer: tt.layer}}, now, tt.force)
			got := ""
			if len(plan.Changes) == 1 {
				got = plan.Changes[0].From + "->" + plan.Changes[0].To
			}
			if got != tt.want || len(plan.Changes) > 1 {
				t.Errorf("plan = %+v, want %q", plan, tt.want)
			}
		})
	}
}

func TestMinIdleHoldsCurationBack(t *testing.T) {
	p := DefaultPolicy()
	u := newUsage()
	recent := now.Add(-30 * time.Minute)
	u.Skills["busy"] = &SkillUsage{FirstSeenAt: ago(400), LastUsedAt: &recent, State: Active}
	u.Skills["idle"] = &SkillUsage{FirstSeenAt: ago(45), State: Active}
	cands := []Candidate{{"busy", "workspace"}, {"idle", "workspace"}}
	plan := p.Plan(u, cands, now, false)
	if len(plan.Changes) != 0 || !strings.Contains(plan.Skipped, "busy was used 30m0s ago, within min_idle 2h0m0s") {
		t.Errorf("plan = %+v", plan)
	}
	if plan = p.Plan(u, cands, now, true); len(plan.Changes) != 1 || plan.Changes[0].Name != "idle" {
		t.Errorf("forced plan = %+v", plan)
	}
}

func TestRecordConcurrently(t *testing.T) {
	s := NewStore(t.TempDir())
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := s.Record(context.Background(), "shared", g%2 == 0, now); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	u, _ := s.Load()
	if sk := u.Skills["shared"]; sk.UseCount != 200 || sk.ViewCount != 200 || !sk.LastUsedAt.Equal(now) {
		t.Errorf("counts = %+v", sk)
	}
}

func TestCorruptUsageIsSetAside(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(dir)
	var warnings []string
	s.Warn = func(w string) { warnings = append(warnings, w) }
	if err := os.WriteFile(s.Path(), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Load(); err != nil || len(u.Skills) != 0 {
		t.Fatalf("Load of a corrupt file = %v, %v", u, err)
	}
	if err := s.Record(context.Background(), "a", false, now); err != nil {
		t.Fatal(err)
	}
	backups, _ := filepath.Glob(s.Path() + ".corrupt-*")
	if len(backups) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], backups[0]) {
		t.Fatalf("backups %v warnings %v", backups, warnings)
	}
	if data, _ := os.ReadFile(backups[0]); string(data) != "{not json" {
		t.Errorf("the backup holds %q", data)
	}
	u, _ := s.Load()
	if u.Skills["a"].UseCount != 1 {
		t.Errorf("fresh file = %+v", u.Skills)
	}
}

func TestAudit(t *testing.T) {
	a := NewAudit(t.TempDir())
	day1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	if err := a.Append(Event{TS: day1, Actor: "x", Op: "stale", Target: "a"}, Event{TS: day2, Actor: "x", Op: "archived", Target: "b"}); err != nil {
		t.Fatal(err)
	}
	all, bad, err := a.Read(time.Time{}, "")
	if err != nil || len(bad) != 0 || len(all) != 2 || all[0].Target != "a" {
		t.Fatalf("read all = %+v %v %v", all, bad, err)
	}
	files, _ := filepath.Glob(filepath.Join(a.dir, "*.jsonl"))
	if len(files) != 2 || filepath.Base(files[0]) != "2026-11-01.jsonl" {
		t.Errorf("files = %v", files)
	}
	if got, _, _ := a.Read(day2, ""); len(got) != 1 || got[0].Op != "archived" {
		t.Errorf("since day2 = %+v", got)
	}
	if got, _, _ := a.Read(time.Time{}, "stale"); len(got) != 1 || got[0].Target != "a" {
		t.Errorf("op stale = %+v", got)
	}
	line, _ := os.ReadFile(files[0])
	for _, key := range []string{`"ts"`, `"actor"`, `"op"`, `"target"`, `"from"`, `"to"`, `"before_hash"`, `"after_hash"`, `"detail"`} {
		if !strings.Contains(string(line), key) {
			t.Errorf("audit line lacks %s: %s", key, line)
		}
	}
}

func TestScheduleErrorsNameFieldAndExpression(t *testing.T) {
	err := ParseSchedule("sync", "every fifteen minutes")
	if err == nil || !strings.Contains(err.Error(), `schedule.sync "every fifteen minutes" does not parse`) {
		t.Errorf("err = %v", err)
	}
	for _, ok := range []string{"@every 15m", "0 3 * * *", "CRON_TZ=Europe/Berlin 0 3 * * *", "@daily"} {
		if err := ParseSchedule("curate", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestSchedulerNeverOverlapsAndSurvivesPanics(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	var running, maxRunning, slowRuns, panics int32
	var m sync.Mutex
	slow := Job{Name: "slow", Spec: "@every 1s", Run: func(ctx context.Context) error {
		m.Lock()
		running++
		maxRunning = max(maxRunning, running)
		slowRuns++
		m.Unlock()
		time.Sleep(2500 * time.Millisecond)
		m.Lock()
		running--
		m.Unlock()
		return nil
	}}
	boom := Job{Name: "boom", Spec: "@every 1s", Run: func(ctx context.Context) error {
		m.Lock()
		panics++
		m.Unlock()
		panic("job exploded")
	}}
	s, err := NewScheduler(context.Background(), log, slow, boom)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	time.Sleep(3500 * time.Millisecond)
	s.Stop()
	m.Lock()
	defer m.Unlock()
	if maxRunning != 1 || slowRuns == 0 {
		t.Errorf("slow job: %d runs, at most %d at once", slowRuns, maxRunning)
	}
	if panics < 2 {
		t.Errorf("the panicking job ran %d times; a panic must not stop the scheduler", panics)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), `"msg":"job panicked","job":"boom","panic":"job exploded"`) {
		t.Errorf("logs:\n%s", logs.String())
	}
	if _, err := NewScheduler(context.Background(), log, Job{Name: "sync", Spec: "nope"}); err == nil || !strings.Contains(err.Error(), `schedule.sync "nope"`) {
		t.Errorf("bad spec: %v", err)
	}
}

type lockedWriter struct {
	w  *strings.Builder
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
