package drafts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/skill"
)

// TestPromoteCanary: the canary fields go into the draft's SKILL.md
// before the gate lets it through, and a canary asked for wrongly is the
// caller's mistake, leaving the draft as it was.
func TestPromoteCanary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gt := newGate(t, Policy{})
	gt.propose(t, "pdf", "Read PDFs.")
	for _, opts := range []PromoteOptions{
		{Approver: "alice", Environments: []string{"prod"}},
		{Approver: "alice", Rollout: "150%"},
		{Approver: "alice", Rollout: "10%", Environments: []string{"two words"}},
	} {
		_, err := gt.Promote(ctx, "pdf", opts)
		var req *RequestError
		if !errors.As(err, &req) {
			t.Errorf("promote with %+v: %v, want a *RequestError", opts, err)
		}
		gt.draftStays(t, "pdf")
	}
	promo, err := gt.Promote(ctx, "pdf", PromoteOptions{Approver: "alice", Rollout: "10%", Environments: []string{"prod", "staging"}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(promo.Dir, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`rollout: "10%"`, `environments: "prod staging"`, "author: agent-7"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("promoted SKILL.md lacks %q:\n%s", want, data)
		}
	}
}

func TestRolloutRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gt := newGate(t, Policy{})
	var req *RequestError
	if _, err := gt.Rollout(ctx, "pdf", "half", RolloutOptions{}); !errors.As(err, &req) {
		t.Errorf("rollout half: %v, want a *RequestError", err)
	}
	// A skill of the workspace layer is no marketplace skill to roll out.
	gt.propose(t, "pdf", "Read PDFs.")
	if _, err := gt.Promote(ctx, "pdf", PromoteOptions{Approver: "alice"}); err != nil {
		t.Fatal(err)
	}
	// It is said to be one, not denied.
	if _, err := gt.Rollout(ctx, "pdf", "50%", RolloutOptions{}); !errors.As(err, &req) || !strings.Contains(err.Error(), "it is a workspace skill, and no source has one of that name") {
		t.Errorf("rollout of a workspace skill: %v, want a *RequestError saying it is a workspace skill", err)
	}
	var unknown *UnknownSkillError
	if _, err := gt.Rollout(ctx, "nothing", "50%", RolloutOptions{}); !errors.As(err, &unknown) || unknown.Name != "nothing" {
		t.Errorf("rollout of no skill: %v, want an *UnknownSkillError", err)
	}
	// A catalog that could not read a source says so: that may be why.
	read := gt.Catalog
	gt.Catalog = func(ctx context.Context) (*layering.Catalog, error) {
		cat, err := read(ctx)
		if err == nil {
			cat.Problems = append(cat.Problems, skill.Problem{Level: skill.Error, Rule: "cache-unreadable", Message: "manifest.json is corrupt; run skillsync sync"})
		}
		return cat, err
	}
	if _, err := gt.Rollout(ctx, "nothing", "50%", RolloutOptions{}); !errors.As(err, &unknown) || !strings.Contains(err.Error(), "the catalog is not whole: manifest.json is corrupt; run skillsync sync") {
		t.Errorf("rollout of no skill over a catalog that is not whole: %v", err)
	}
}

// TestCanaryOnlyWithAPromotion: the canary fields are written only once
// the policy lets the draft through. A refused promotion, and one whose
// source fails, leave the draft's SKILL.md as it was, so a later
// promotion without --canary does not ship the share. A draft folder
// that is a link is refused, and nothing is written where it leads.
func TestCanaryOnlyWithAPromotion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gt := newGate(t, Policy{Approvers: []string{"alice"}, Targets: []string{"workspace", "team"}})
	gt.sources["team"] = func() (*Target, error) {
		return &Target{Name: "team", Kind: "dir", Repository: dir.NewLocal("team", t.TempDir(), repository.Options{})}, nil
	}
	gt.propose(t, "pdf", "Read PDFs.")
	md := filepath.Join(gt.layout.DraftsDir(), "pdf", "SKILL.md")
	before, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	canary := PromoteOptions{Rollout: "10%", Environments: []string{"prod"}}
	for _, opts := range []PromoteOptions{
		{Approver: "mallory", To: "workspace"},
		{Approver: "alice", To: "team"}, // a dir: source takes no publications
	} {
		opts.Rollout, opts.Environments = canary.Rollout, canary.Environments
		if _, err := gt.Promote(ctx, "pdf", opts); err == nil {
			t.Fatalf("promote %+v succeeded", opts)
		}
		if after, _ := os.ReadFile(md); string(after) != string(before) {
			t.Errorf("after the failed promotion %+v the draft's SKILL.md is\n%s", opts, after)
		}
	}

	victim := skilltest.Skill(t, t.TempDir(), "evil", "Evil.", nil)
	if err := os.Symlink(victim, filepath.Join(gt.layout.DraftsDir(), "evil")); err != nil {
		t.Fatal(err)
	}
	// Not written at all: not even written and put back.
	was, err := os.Stat(filepath.Join(victim, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	canary.Approver, canary.To = "alice", "workspace"
	if _, err := gt.Promote(ctx, "evil", canary); err == nil {
		t.Error("promote of a draft that is a link succeeded")
	}
	if now, err := os.Stat(filepath.Join(victim, "SKILL.md")); err != nil || !os.SameFile(was, now) || !now.ModTime().Equal(was.ModTime()) {
		t.Errorf("the file where the link leads was written: %v", err)
	}
}

// TestCanaryKilledMidPromotion: a promotion killed after it wrote the
// canary fields into the draft's SKILL.md, before it moved the draft or
// put the SKILL.md back, leaves a journal; the next skillsync to take the
// draft's lock puts the SKILL.md back, so a promotion without --canary
// ships no share. A SKILL.md its author changed since is left alone.
func TestCanaryKilledMidPromotion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// killed leaves the draft as a process killed between the edit and
	// the move leaves it: edited under the lock, which the kernel then
	// releases, with nothing put back.
	killed := func(t *testing.T, gt *gateTest, name string) {
		t.Helper()
		edit, err := canary(name, PromoteOptions{Rollout: "10%", Environments: []string{"prod"}})
		if err != nil {
			t.Fatal(err)
		}
		lock, err := gt.Folder.Lock(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gt.Folder.stage(name, edit); err != nil {
			t.Fatal(err)
		}
		lock.Close()
	}
	journals := func(t *testing.T, gt *gateTest) []string {
		t.Helper()
		left, err := filepath.Glob(filepath.Join(gt.layout.DraftLocksDir(), "*.staged"))
		if err != nil {
			t.Fatal(err)
		}
		return left
	}

	t.Run("put back", func(t *testing.T) {
		t.Parallel()
		gt := newGate(t, Policy{})
		gt.propose(t, "pdf", "Read PDFs.")
		md := filepath.Join(gt.layout.DraftsDir(), "pdf", "SKILL.md")
		before, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		killed(t, gt, "pdf")
		if now, _ := os.ReadFile(md); !strings.Contains(string(now), "rollout:") {
			t.Fatalf("the edit was not written, the test shows nothing:\n%s", now)
		}
		// Another spelling of the name takes the same lock.
		lock, err := gt.Folder.Lock(ctx, "PDF")
		if err != nil {
			t.Fatal(err)
		}
		lock.Close()
		if now, _ := os.ReadFile(md); string(now) != string(before) {
			t.Errorf("after the lock was taken again the draft's SKILL.md is\n%s\nwant\n%s", now, before)
		}
		promo, err := gt.Promote(ctx, "pdf", PromoteOptions{Approver: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(filepath.Join(promo.Dir, "SKILL.md")); strings.Contains(string(data), "rollout") {
			t.Errorf("a promotion without --canary shipped the killed one's fields:\n%s", data)
		}
		if left := journals(t, gt); len(left) != 0 {
			t.Errorf("journals left: %v", left)
		}
	})

	t.Run("changed since", func(t *testing.T) {
		t.Parallel()
		gt := newGate(t, Policy{})
		gt.propose(t, "pdf", "Read PDFs.")
		md := filepath.Join(gt.layout.DraftsDir(), "pdf", "SKILL.md")
		killed(t, gt, "pdf")
		mine := "---\nname: pdf\ndescription: Read PDFs, as I wrote it after.\n---\nMine.\n"
		if err := os.WriteFile(md, []byte(mine), 0o644); err != nil {
			t.Fatal(err)
		}
		lock, err := gt.Folder.Lock(ctx, "pdf")
		if err != nil {
			t.Fatal(err)
		}
		lock.Close()
		if now, _ := os.ReadFile(md); string(now) != mine {
			t.Errorf("the author's SKILL.md was replaced:\n%s", now)
		}
		if left := journals(t, gt); len(left) != 0 {
			t.Errorf("journals left: %v", left)
		}
	})

	t.Run("not a journal", func(t *testing.T) {
		t.Parallel()
		gt := newGate(t, Policy{})
		gt.propose(t, "pdf", "Read PDFs.")
		killed(t, gt, "pdf")
		left := journals(t, gt)
		if len(left) != 1 {
			t.Fatalf("journals: %v, want one", left)
		}
		if err := os.WriteFile(left[0], []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := gt.Folder.Lock(ctx, "pdf")
		if err == nil || !strings.Contains(err.Error(), left[0]) {
			t.Errorf("lock over a damaged journal: %v, want an error naming %s", err, left[0])
		}
		if _, err := os.Stat(left[0]); err != nil {
			t.Errorf("the damaged journal was not kept: %v", err)
		}
	})
}

// TestJournalNeverWritesThroughALink: a draft's folder that is a link
// when a journal is recovered (planted with the journal, or swapped in
// after the kill) is not written through: the file where it leads, even
// one that is the edited SKILL.md to the byte, keeps its content, as
// stage refuses such a folder.
func TestJournalNeverWritesThroughALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gt := newGate(t, Policy{})
	gt.propose(t, "pdf", "Read PDFs.")
	draft := filepath.Join(gt.layout.DraftsDir(), "pdf")
	edit, err := canary("pdf", PromoteOptions{Rollout: "10%", Environments: []string{"prod"}})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := gt.Folder.Lock(ctx, "pdf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gt.Folder.stage("pdf", edit); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	edited, err := os.ReadFile(filepath.Join(draft, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Elsewhere, outside the workspace: a file the journal's sum fits.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "SKILL.md"), edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(draft); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, draft); err != nil {
		t.Fatal(err)
	}
	if lock, err := gt.Folder.Lock(ctx, "pdf"); err == nil {
		lock.Close()
	}
	if now, _ := os.ReadFile(filepath.Join(outside, "SKILL.md")); string(now) != string(edited) {
		t.Errorf("the journal was put back through the draft's link, over %s:\n%s", outside, now)
	}
}
