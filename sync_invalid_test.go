package skillsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// officeSkills is an upstream repository of pdf, docx and xlsx under
// skills/, committed.
func officeSkills(t *testing.T) *gittest.Repo {
	t.Helper()
	up := gittest.NewRepo(t, "main")
	for _, name := range []string{"pdf", "docx", "xlsx"} {
		up.Skill("skills/"+name, "The "+name+" skill.")
	}
	up.Commit("one")
	return up
}

// keptWarning reports whether r has the warning that skill docx keeps its
// last good copy, naming its file and the rule its new version breaks.
func keptWarning(r *SyncReport, rule string) bool {
	return slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, "skill docx keeps its last good copy") && strings.Contains(w, "skills/docx") && strings.Contains(w, "("+rule+")")
	})
}

// checkKept fails unless docx is in the cache and the target as its last
// good copy has it, described as want.
func checkKept(t *testing.T, ws, when, want string) {
	t.Helper()
	for _, p := range []string{".skills-cache/team/docx/SKILL.md", "out/docx/SKILL.md"} {
		data, err := os.ReadFile(filepath.Join(ws, p))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %s: %v\n%s", when, p, err, data)
		}
	}
}

// TestSyncKeepsTheLastGoodCopyOfASkillMadeInvalid: a skill the cache has
// whose new upstream version is invalid (frontmatter that does not
// parse, a field strict mode refuses, a name not its folder's under
// strict, past max_skill_size) keeps its cached and placed copies; the
// source is partial (exit 3) and a warning names the skill, its file and
// the problem, on this sync and on the next, until upstream fixes it:
// then it is updated, and the source is whole again.
func TestSyncKeepsTheLastGoodCopyOfASkillMadeInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, settings, rule string
		spoil                func(up *gittest.Repo)
	}{
		{"bad yaml", "", "frontmatter-yaml", func(up *gittest.Repo) {
			up.Write("skills/docx/SKILL.md", "---\nname: docx\ndescription: Use when: the user asks about docx\n---\nBody\n", 0o644)
		}},
		{"strict field", "strict: true\n", "field-not-in-spec", func(up *gittest.Repo) {
			up.Write("skills/docx/SKILL.md", "---\nname: docx\ndescription: The docx skill.\nmodel: opus\n---\nBody\n", 0o644)
		}},
		{"strict name", "strict: true\n", "name-mismatch", func(up *gittest.Repo) {
			up.Write("skills/docx/SKILL.md", "---\nname: docx2\ndescription: The docx skill.\n---\nBody\n", 0o644)
		}},
		{"too large", "max_skill_size: 2000\n", "skill-too-large", func(up *gittest.Repo) {
			up.Write("skills/docx/data.txt", strings.Repeat("d", 3000), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			up := officeSkills(t)
			e, ws := newWorkspace(t, tc.settings+"repositories:\n  - name: team\n    git: "+up.URL()+"\ntargets:\n  - dir: out\n")
			mustSync(t, e, SyncOptions{})
			tc.spoil(up)
			up.Skill("skills/pdf", "The pdf skill, edited.")
			up.Commit("spoil docx")
			for _, when := range []string{"first sync", "second sync"} {
				r, err := e.Sync(ctx, SyncOptions{})
				if !errors.Is(err, ErrPartial) || r == nil {
					t.Fatalf("%s: err = %v, want ErrPartial", when, err)
				}
				if s := r.Sources[0]; s.Status != StatusPartial || s.Skills != 3 || len(r.Skills.Removed) != 0 {
					t.Errorf("%s: %+v, removed %v", when, s, r.Skills.Removed)
				}
				if !keptWarning(r, tc.rule) {
					t.Errorf("%s: no warning that docx keeps its copy for %s: %q", when, tc.rule, r.Warnings)
				}
				if !slices.ContainsFunc(r.Problems, func(p ProblemReport) bool { return p.Rule == tc.rule && strings.HasPrefix(p.Path, "skills/docx") }) {
					t.Errorf("%s: no %s problem: %+v", when, tc.rule, r.Problems)
				}
				checkKept(t, ws, when, "The docx skill.")
			}
			if data, _ := os.ReadFile(filepath.Join(ws, "out", "pdf", "SKILL.md")); !strings.Contains(string(data), "edited") {
				t.Errorf("pdf was not updated beside the kept docx:\n%s", data)
			}

			up.Remove("skills/docx/data.txt")
			up.Skill("skills/docx", "The docx skill, fixed.")
			up.Commit("fix docx")
			r, err := e.Sync(ctx, SyncOptions{})
			if err != nil || r.Sources[0].Status != StatusUpdated || !slices.Equal(r.Skills.Updated, []string{"team/docx"}) || keptWarning(r, tc.rule) {
				t.Fatalf("fixed upstream: %v, %+v, updated %v, warnings %q", err, r.Sources, r.Skills.Updated, r.Warnings)
			}
			checkKept(t, ws, "fixed upstream", "The docx skill, fixed.")
			if r, err := e.Sync(ctx, SyncOptions{}); err != nil || r.Sources[0].Status != StatusUnchanged {
				t.Errorf("after the fix, again: %v, %+v", err, r.Sources)
			}
		})
	}
}

// TestSyncKeepsNoInvalidSkillItNeverHad: a new skill whose SKILL.md is
// invalid is a problem of that skill, not a partial source; a skill kept
// for its invalid new version that upstream then removes is removed.
func TestSyncKeepsNoInvalidSkillItNeverHad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := officeSkills(t)
	e, ws := newWorkspace(t, "repositories:\n  - name: team\n    git: "+up.URL()+"\ntargets:\n  - dir: out\n")
	mustSync(t, e, SyncOptions{})
	up.Write("skills/bad/SKILL.md", "---\nname: bad\ndescription: Use when: never\n---\n", 0o644)
	up.Commit("a new, invalid skill")
	r, err := e.Sync(ctx, SyncOptions{})
	if err != nil || r.Sources[0].Status == StatusPartial || !hasRule(r, "frontmatter-yaml", "skills/bad/SKILL.md") {
		t.Fatalf("a new invalid skill: %v, %+v, %+v", err, r.Sources, r.Problems)
	}
	for _, p := range []string{".skills-cache/team/bad", "out/bad"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s is there", p)
		}
	}

	up.Write("skills/docx/SKILL.md", "---\nname: docx\ndescription: Use when: docx\n---\n", 0o644)
	up.Commit("spoil docx")
	if _, err := e.Sync(ctx, SyncOptions{}); !errors.Is(err, ErrPartial) {
		t.Fatalf("docx spoiled: %v", err)
	}
	up.Remove("skills/docx")
	up.Commit("remove docx")
	r, err = e.Sync(ctx, SyncOptions{})
	if err != nil || !slices.Equal(r.Skills.Removed, []string{"team/docx"}) || r.Sources[0].Status != StatusUpdated {
		t.Fatalf("docx removed upstream: %v, %+v, removed %v", err, r.Sources, r.Skills.Removed)
	}
	for _, p := range []string{".skills-cache/team/docx", "out/docx"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
}

// TestSyncRemovesWhatAStricterConfigRefuses: the last good copy is kept
// only while the config is the one it was made under: turning strict on
// removes a cached skill strict refuses, as the config asks.
func TestSyncRemovesWhatAStricterConfigRefuses(t *testing.T) {
	t.Parallel()
	up := officeSkills(t)
	up.Write("skills/docx/SKILL.md", "---\nname: docx\ndescription: The docx skill.\nmodel: opus\n---\nBody\n", 0o644)
	up.Commit("a field outside the spec")
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\ntargets:\n  - dir: out\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	cfg := filepath.Join(ws, config.FileName)
	skilltest.WriteFile(t, cfg, "strict: true\n"+text)
	r, err := reload(t, cfg).Sync(context.Background(), SyncOptions{})
	if err != nil || !slices.Equal(r.Skills.Removed, []string{"team/docx"}) {
		t.Errorf("strict turned on: %v, removed %v, warnings %q", err, r.Skills.Removed, r.Warnings)
	}
}

// TestFrozenSyncOfAKeptInvalidSkill: the lock a sync writes while it
// keeps docx's last good copy has docx at that copy's hash (as for a
// skill it could not read). sync --frozen passes it as partial: on the
// machine that keeps the copy, and on a fresh checkout of the committed
// config and lock, which has no copy to keep, places the rest and says
// why docx is missing; neither rewrites the lock.
func TestFrozenSyncOfAKeptInvalidSkill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := officeSkills(t)
	text := "repositories:\n  - name: team\n    git: " + up.URL() + "\ntargets:\n  - dir: out\n"
	e, ws := newWorkspace(t, text)
	mustSync(t, e, SyncOptions{})
	before, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err != nil {
		t.Fatal(err)
	}
	up.Write("skills/docx/SKILL.md", "---\nname: docx\ndescription: Use when: docx\n---\n", 0o644)
	head := up.Commit("spoil docx")
	if _, err := e.Sync(ctx, SyncOptions{}); !errors.Is(err, ErrPartial) {
		t.Fatalf("docx spoiled: %v", err)
	}
	locked, err := os.ReadFile(filepath.Join(ws, "skillsync.lock"))
	if err != nil || !strings.Contains(string(locked), head) {
		t.Fatalf("the lock is not at the new revision: %v\n%s", err, locked)
	}
	docx := func(lock []byte) string {
		_, rest, _ := strings.Cut(string(lock), `"docx": "`)
		return rest[:min(len(rest), 64)]
	}
	if docx(locked) == "" || docx(locked) != docx(before) {
		t.Fatalf("the lock does not have docx's last good copy:\n%s", locked)
	}

	fresh := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(fresh, config.FileName), text)
	skilltest.WriteFile(t, filepath.Join(fresh, "skillsync.lock"), string(locked))
	for _, tc := range []struct{ name, cfg string }{{"fresh checkout", filepath.Join(fresh, config.FileName)}, {"the keeping machine", filepath.Join(ws, config.FileName)}} {
		r, err := reload(t, tc.cfg).Sync(ctx, SyncOptions{Frozen: true})
		var fe *FrozenError
		if errors.As(err, &fe) || !errors.Is(err, ErrPartial) || r == nil || r.Sources[0].Status != StatusPartial {
			t.Fatalf("%s: frozen sync = %v, %+v", tc.name, err, r)
		}
		if !slices.ContainsFunc(r.Warnings, func(w string) bool {
			return strings.Contains(w, "skill docx") && strings.Contains(w, "skills/docx/SKILL.md")
		}) {
			t.Errorf("%s: no warning names docx: %q", tc.name, r.Warnings)
		}
		dir := filepath.Dir(tc.cfg)
		for _, name := range []string{"pdf", "xlsx"} {
			if _, err := os.Stat(filepath.Join(dir, "out", name, "SKILL.md")); err != nil {
				t.Errorf("%s: %s not placed: %v", tc.name, name, err)
			}
		}
		if now, _ := os.ReadFile(filepath.Join(dir, "skillsync.lock")); string(now) != string(locked) {
			t.Errorf("%s: the frozen sync rewrote the lock:\n%s", tc.name, now)
		}
	}
	checkKept(t, ws, "the keeping machine", "The docx skill.")
}

// TestSyncReportsTheLocalLayersProblems: an invalid skill in the
// workspace's skills/, the user's or the global folder reaches no target,
// and every sync says why, as list does (layer, file and line), in its
// problems: a problem of that skill, which leaves the sync a success.
func TestSyncReportsTheLocalLayersProblems(t *testing.T) {
	t.Parallel()
	cfg, ws := workspaceConfig(t, "user: alice\nrepositories: []\ntargets:\n  - dir: out\n")
	global := t.TempDir()
	cfg.Global = global // workspaceConfig leaves the machine's own out
	e := NewEngine(cfg, WithGitStore(filepath.Join(ws, ".git-store")))
	skilltest.Skill(t, filepath.Join(ws, "skills"), "ok", "A valid skill.", nil)
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy: build and ship the app\n---\nSteps\n")
	skilltest.WriteFile(t, filepath.Join(ws, "alice", "skills", "mine", "SKILL.md"), "---\nname: mine\n---\nSteps\n")
	skilltest.WriteFile(t, filepath.Join(global, "g", "SKILL.md"), "no frontmatter\n")
	want := []ProblemReport{
		{Source: "workspace", Path: "deploy/SKILL.md", Level: "error", Rule: "frontmatter-yaml", Line: 3},
		{Source: "user", Skill: "mine", Path: "mine/SKILL.md", Level: "error", Rule: "description-missing"},
		{Source: "global", Path: "g/SKILL.md", Level: "error", Rule: "frontmatter-missing", Line: 1},
	}
	for _, when := range []string{"first sync", "second sync"} {
		r := mustSync(t, e, SyncOptions{})
		for _, w := range want {
			if !slices.ContainsFunc(r.Problems, func(p ProblemReport) bool {
				return p.Source == w.Source && p.Path == w.Path && p.Level == w.Level && p.Rule == w.Rule && (w.Line == 0 || p.Line == w.Line) && p.Message != ""
			}) {
				t.Errorf("%s: no problem %+v in %+v", when, w, r.Problems)
			}
		}
		if _, err := os.Stat(filepath.Join(ws, "out", "ok", "SKILL.md")); err != nil {
			t.Errorf("%s: the valid skill is not placed: %v", when, err)
		}
		if _, err := os.Stat(filepath.Join(ws, "out", "deploy")); err == nil {
			t.Errorf("%s: the invalid skill is placed", when)
		}
	}
}
