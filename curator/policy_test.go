package curator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/layering"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(days int) *time.Time {
	t := now.Add(-time.Duration(days) * 24 * time.Hour)
	return &t
}

func mustCopy(t *testing.T, key string) Copy {
	t.Helper()
	c, err := ParseCopy(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCopyKeys(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"marketplace:team/pdf", "workspace/pdf", "user:alice/pdf", "global/pdf", "marketplace:a:b/c:d"} {
		c, err := ParseCopy(key)
		if err != nil || c.String() != key {
			t.Errorf("ParseCopy(%q) = %+v, %v", key, c, err)
		}
	}
	if c := mustCopy(t, "user:alice/pdf"); c.Layer != layering.User || c.Owner != "alice" || c.Name != "pdf" {
		t.Errorf("parts = %+v", c)
	}
	for _, key := range []string{
		"pdf", "workspace/../x", "workspace/..", "workspace/.hidden", "workspace/a/b", "workspace/", "workspace:bob/pdf",
		"marketplace/pdf", "marketplace:/pdf", "marketplace:../x/pdf", "user:.alice/pdf", "cache/pdf", "/pdf",
		"workspace/a\\b", "workspace/a\x00b",
	} {
		if c, err := ParseCopy(key); err == nil {
			t.Errorf("ParseCopy(%q) = %+v, want an error", key, c)
		}
	}
	if _, err := NewCopy(layering.Marketplace, "team", "../pdf"); err == nil {
		t.Error("NewCopy took a name that leaves its directory")
	}
	if _, err := (Copy{Layer: layering.Workspace, Name: "../x"}).MarshalText(); err == nil {
		t.Error("an invalid copy was marshalled")
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	tests := []struct {
		name  string
		skill *SkillUsage
		layer string
		force bool
		want  string // "" for no change, else "from->to"
	}{
		{"fresh stays active", &SkillUsage{FirstSeenAt: ago(1), State: Active}, "workspace/s", false, ""},
		{"29 days idle stays active", &SkillUsage{FirstSeenAt: ago(29), State: Active}, "workspace/s", false, ""},
		{"45 days idle becomes stale", &SkillUsage{FirstSeenAt: ago(45), State: Active}, "workspace/s", false, "active->stale"},
		{"a recent view keeps it active", &SkillUsage{FirstSeenAt: ago(200), LastViewedAt: ago(10), State: Active}, "user:alice/s", false, ""},
		{"120 days idle is archived", &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(120), State: Active}, "workspace/s", false, "active->archived"},
		{"stale 120 days is archived", &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(120), State: Stale, StateSince: ago(60)}, "marketplace:team/s", false, "stale->archived"},
		{"stale used again is active", &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(3), State: Stale, StateSince: ago(20)}, "workspace/s", false, "stale->active"},
		{"stale not used stays stale", &SkillUsage{FirstSeenAt: ago(50), State: Stale, StateSince: ago(5)}, "workspace/s", false, ""},
		{"pinned never changes", &SkillUsage{FirstSeenAt: ago(500), State: Active, Pinned: true}, "workspace/s", false, ""},
		{"archived stays archived", &SkillUsage{FirstSeenAt: ago(500), State: Archived, StateSince: ago(10)}, "marketplace:team/s", false, ""},
		{"a layer not curated is left", &SkillUsage{FirstSeenAt: ago(500), State: Active}, "global/s", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUsage()
			c := mustCopy(t, tt.layer)
			u.Skills[c] = tt.skill
			plan := p.Plan(u, []Candidate{{Copy: c}}, now, tt.force)
			got := ""
			if len(plan.Changes) == 1 {
				got = string(plan.Changes[0].From) + "->" + string(plan.Changes[0].To)
			}
			if got != tt.want || len(plan.Changes) > 1 {
				t.Errorf("plan = %+v, want %q", plan, tt.want)
			}
		})
	}
}

func TestPlanActsOnOneCopy(t *testing.T) {
	t.Parallel()
	u := newUsage()
	alice, ws := mustCopy(t, "user:alice/pdf"), mustCopy(t, "workspace/pdf")
	u.Skills[alice] = &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(150), LastSource: FromMCP, State: Active}
	u.Skills[ws] = &SkillUsage{FirstSeenAt: ago(200), LastUsedAt: ago(2), LastSource: FromHook, State: Active}
	plan := DefaultPolicy().Plan(u, []Candidate{{Copy: alice}, {Copy: ws}}, now, false)
	if len(plan.Changes) != 1 || plan.Changes[0].Copy != alice || plan.Changes[0].To != Archived {
		t.Fatalf("plan = %+v", plan)
	}
	if !strings.Contains(plan.Changes[0].Reason, "last used through mcp") {
		t.Errorf("reason %q does not say where the last use came from", plan.Changes[0].Reason)
	}
	if len(plan.Skills) != 2 || plan.Skills[1].Copy != ws || plan.Skills[1].LastSource != FromHook || !plan.Skills[1].LastUsed.Equal(*ago(2)) {
		t.Errorf("checked = %+v", plan.Skills)
	}
}

func TestMinIdleHoldsCurationBack(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	u := newUsage()
	recent := now.Add(-30 * time.Minute)
	busy, idle := mustCopy(t, "workspace/busy"), mustCopy(t, "workspace/idle")
	u.Skills[busy] = &SkillUsage{FirstSeenAt: ago(400), LastUsedAt: &recent, State: Active}
	u.Skills[idle] = &SkillUsage{FirstSeenAt: ago(45), State: Active}
	cands := []Candidate{{Copy: busy}, {Copy: idle}}
	plan := p.Plan(u, cands, now, false)
	if len(plan.Changes) != 0 || !strings.Contains(plan.Skipped, "the skill busy was used 30m0s ago, within curator.min_idle (2h0m0s)") {
		t.Errorf("plan = %+v", plan)
	}
	if plan = p.Plan(u, cands, now, true); len(plan.Changes) != 1 || plan.Changes[0].Name != "idle" {
		t.Errorf("forced plan = %+v", plan)
	}
}

// TestNoUsageNoArchive: a workspace that never recorded a use loses no
// skill to the curator; idle copies only become stale, and the plan says
// why.
func TestNoUsageNoArchive(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	u := newUsage()
	a, b := mustCopy(t, "workspace/a"), mustCopy(t, "marketplace:team/b")
	u.Skills[a] = &SkillUsage{FirstSeenAt: ago(200), State: Active}
	u.Skills[b] = &SkillUsage{FirstSeenAt: ago(200), State: Stale, StateSince: ago(150)}
	cands := []Candidate{{Copy: a}, {Copy: b}}
	plan := p.Plan(u, cands, now, false)
	if plan.ArchiveHeld != NoUsageYet || len(plan.Changes) != 1 || plan.Changes[0].Copy != a || plan.Changes[0].To != Stale {
		t.Fatalf("plan without any usage = %+v", plan)
	}
	if !strings.Contains(plan.Summary(), NoUsageYet) {
		t.Errorf("summary %q", plan.Summary())
	}
	if forced := p.Plan(u, cands, now, true); len(forced.Changes) != 2 || forced.ArchiveHeld != "" {
		t.Errorf("forced plan = %+v", forced)
	}
	// One view anywhere, long ago, and curation archives.
	u.Skills[mustCopy(t, "workspace/other")] = &SkillUsage{FirstSeenAt: ago(300), LastViewedAt: ago(250), ViewCount: 1, LastSource: FromImport}
	if plan := p.Plan(u, cands, now, false); len(plan.Changes) != 2 || plan.Changes[0].To != Archived || plan.ArchiveHeld != "" {
		t.Errorf("plan after a view = %+v", plan)
	}
}

// TestPlanJSONHasEveryKey: curate --json gives every key docs/usage.md
// shows, archive_held "" included when nothing is held, so a script can
// read it without checking that it is there.
func TestPlanJSONHasEveryKey(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(Policy{}.Plan(&Usage{}, nil, time.Now(), false))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"checked", "changes", "skills", "skipped", "archive_held"} {
		if _, ok := got[key]; !ok {
			t.Errorf("curate --json %s lacks %q", data, key)
		}
	}
}
