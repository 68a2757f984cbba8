package skillsync

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestSyncSkippedSkillsArePartialOnEveryKind (issue 24): a source whose
// skills max_source_size skips is partly synced, exit 3, on PostgreSQL as
// on git, and says so on the next sync too (the cache does not hold the
// whole revision, so the next sync looks again).
func TestSyncSkippedSkillsArePartialOnEveryKind(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Own(t)
	dsn := c.DSNFile(t, "postgres")
	up := gittest.NewRepo(t, "main")
	for _, name := range []string{"a-small", "b-big"} {
		up.Skill("skills/"+name, "The "+name+" skill.")
	}
	up.Write("skills/b-big/data.txt", strings.Repeat("b", 3000), 0o644)
	up.Commit("one")
	e, _ := newWorkspace(t, "max_source_size: 2000\nrepositories:\n  - name: team\n    dsn_file: "+dsn+"\n    create: true\n  - name: gitteam\n    git: "+up.URL()+"\ntargets: []\n")
	for _, name := range []string{"a-small", "b-big"} {
		extra := map[string]string{}
		if name == "b-big" {
			extra["data.txt"] = strings.Repeat("b", 3000)
		}
		dir := skilltest.Skill(t, t.TempDir(), name, "The "+name+" skill.", extra)
		if _, err := e.Gate().Publish(ctx, dir, "team", "alice"); err != nil {
			t.Fatal(err)
		}
	}
	for _, when := range []string{"first sync", "second sync"} {
		r, err := e.Sync(ctx, SyncOptions{})
		if !errors.Is(err, ErrPartial) {
			t.Errorf("%s: err = %v, want ErrPartial", when, err)
		}
		if r == nil {
			t.Fatalf("%s: no report", when)
		}
		for _, s := range r.Sources {
			if s.Status != StatusPartial || s.Skills != 1 {
				t.Errorf("%s: %s is %s with %d skills, want partial with 1", when, s.Source, s.Status, s.Skills)
			}
		}
		for _, p := range []string{"b-big", "skills/b-big"} {
			if !hasRule(r, "source-too-large", p) {
				t.Errorf("%s: no source-too-large for %s: %+v", when, p, r.Problems)
			}
		}
	}
}

// TestSyncMaxSourceSizeSkippingEverySkill (issue 24): a source all of
// whose skills max_source_size skips says so, naming the limit, on every
// sync: not source-empty, not unchanged.
func TestSyncMaxSourceSizeSkippingEverySkill(t *testing.T) {
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/a", "A.")
	up.Skill("skills/b", "B.")
	up.Commit("one")
	e, _ := newWorkspace(t, "max_source_size: 10\nrepositories:\n  - name: team\n    git: "+up.URL()+"\ntargets: []\n")
	for _, when := range []string{"first sync", "second sync"} {
		r, err := e.Sync(context.Background(), SyncOptions{})
		if !errors.Is(err, ErrPartial) || r == nil {
			t.Fatalf("%s: err = %v, want ErrPartial", when, err)
		}
		if s := r.Sources[0]; s.Status != StatusPartial || s.Skills != 0 {
			t.Errorf("%s: %+v, want partial with no skills", when, s)
		}
		said := false
		for _, p := range r.Problems {
			if p.Rule == "source-empty" {
				t.Errorf("%s: %+v", when, p)
			}
			if p.Rule == "source-too-large" && p.Skill == "" && strings.Contains(p.Message, "max_source_size 10") {
				said = true
			}
		}
		if !said {
			t.Errorf("%s: no problem says max_source_size skipped every skill: %+v", when, r.Problems)
		}
	}
}
