package git_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
)

// editRequest is a request to add line to the SKILL.md of the skill name.
func editRequest(name, line string) repository.PublishRequest {
	return repository.PublishRequest{Name: name, Message: "Edit " + name + "\n", Author: "alice", Email: "alice@example.com",
		When: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		Edit: func(md []byte) ([]byte, error) { return append(bytes.Clone(md), line+"\n"...), nil }}
}

// TestPublishEditChangesOnlySkillMD: an edit commits the SKILL.md the
// base holds, changed, and keeps every other entry of the skill's folder
// as it is: links out of the skill and to folders, a broken link, a link
// to a file of the skill and an executable. With the workspace's revision
// missing from the store, a review branch builds on the tip, and the
// edit starts from the tip's SKILL.md: an upstream fix is never undone.
func TestPublishEditChangesOnlySkillMD(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/pdf", "Read PDFs.")
	up.Write("skills/shared/bin/tool", "tool\n", 0o755)
	up.Write("LICENSE", "license\n", 0)
	up.Write("skills/pdf/scripts/run.sh", "#!/bin/sh\n", 0o755)
	up.Symlink("../shared/bin", "skills/pdf/bin")
	up.Symlink("../../LICENSE", "skills/pdf/LICENSE")
	up.Symlink("nonexistent", "skills/pdf/broken")
	up.Symlink("SKILL.md", "skills/pdf/README.md")
	up.Commit("pdf")
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	up.Write("skills/pdf/SKILL.md", up.Git("show", "HEAD:skills/pdf/SKILL.md")+"\nupstream fix\n", 0)
	tip := up.Commit("fix")

	req := editRequest("pdf", "rollout: 50%")
	req.Base = repository.Revision(strings.Repeat("ab", 20)) // not in the store
	res := publish(t, g, req)
	if res.Branch != "skillsync/pdf" || string(res.Base) != tip || res.Path != "skills/pdf" {
		t.Fatalf("published = %+v, want a branch on the tip %s", res, tip)
	}
	if got := up.Git("diff", "--name-status", tip, "skillsync/pdf"); got != "M\tskills/pdf/SKILL.md" {
		t.Errorf("changed = %q, want only SKILL.md", got)
	}
	if got := up.Git("show", "skillsync/pdf:skills/pdf/SKILL.md"); !strings.HasSuffix(got, "upstream fix\nrollout: 50%") {
		t.Errorf("SKILL.md = %q, want the tip's with the edit", got)
	}
	up.Git("fsck", "--strict")

	if _, err := g.Publish(context.Background(), editRequest("nosuch", "x")); err == nil || !strings.Contains(err.Error(), "no skill of that name") {
		t.Errorf("edit of a skill the repository lacks = %v", err)
	}
	same := editRequest("pdf", "")
	same.Edit = func(md []byte) ([]byte, error) { return md, nil }
	same.Branch = "same"
	if _, err := g.Publish(context.Background(), same); !errors.Is(err, repository.ErrNothingToPublish) {
		t.Errorf("an edit that changes nothing = %v", err)
	}
}

// TestPublishOverAFolderThatIsNoSkill: a skill published where the
// repository has a folder of its name holding no skill is refused, and
// the folder's files are kept.
func TestPublishOverAFolderThatIsNoSkill(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/one", "One.")
	up.Write("skills/common/helper.sh", "#!/bin/sh\n", 0o755)
	up.Commit("common")
	g := newGit(t, up.URL(), "")
	req := draftRequest(t, "common", "Common.", nil)
	req.Direct = true
	_, err := g.Publish(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "skills/common") || !strings.Contains(err.Error(), "holds no skill") {
		t.Errorf("publish over a folder that is no skill = %v", err)
	}
	if got := up.Git("ls-tree", "-r", "--name-only", "main", "skills/common"); got != "skills/common/helper.sh" {
		t.Errorf("skills/common = %q", got)
	}
}

// TestPublishKeepsTheSkillsLinks: a draft is regular files, so publishing
// it over a skill keeps the skill's symbolic links where the draft has
// nothing in their place; its other files are the draft's.
func TestPublishKeepsTheSkillsLinks(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/pdf", "Old.")
	up.Write("skills/pdf/old.md", "old\n", 0)
	up.Write("skills/shared/bin/tool", "tool\n", 0o755)
	up.Symlink("../shared/bin", "skills/pdf/bin")
	up.Symlink("../../../LICENSE", "skills/pdf/docs/LICENSE")
	up.Symlink("old.md", "skills/pdf/notes.md")
	up.Commit("pdf")
	g := newGit(t, up.URL(), "")
	res := publish(t, g, draftRequest(t, "pdf", "New.", map[string]string{"notes.md": "now a file\n"}))
	got := up.Git("ls-tree", "-r", res.Branch, "skills/pdf")
	for _, want := range []string{"120000 blob", "\tskills/pdf/bin", "\tskills/pdf/docs/LICENSE", "100644 blob"} {
		if !strings.Contains(got, want) {
			t.Errorf("tree lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old.md") || strings.Count(got, "120000") != 2 {
		t.Errorf("tree:\n%s\nwant old.md gone and notes.md a file", got)
	}
}
