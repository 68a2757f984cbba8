package git_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/skill"
)

// draftRequest makes the request to publish a skill named name, with a
// SKILL.md of the description and extra files.
func draftRequest(t *testing.T, name, description string, extra map[string]string) repository.PublishRequest {
	t.Helper()
	dir := skilltest.Skill(t, t.TempDir(), name, description, extra)
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	list, problems := skill.ListFiles(fsys, name, 0)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return repository.PublishRequest{Name: name, Files: fsys, List: list, Message: "Add " + name + "\n\nApproved-by: alice\n",
		Author: "alice", Email: "alice@example.com", When: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
}

func publish(t *testing.T, g *git.Git, req repository.PublishRequest) repository.Published {
	t.Helper()
	res, err := g.Publish(context.Background(), req)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return res
}

// TestPublishToAReviewBranch: the skill is committed under the source's
// path on skillsync/<name>, on top of the workspace's revision, with the
// approver and the message, and the tracked branch is left alone. The
// store is shallow, as a sync leaves it.
func TestPublishToAReviewBranch(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/one", "First.")
	up.Write("README.md", "readme\n", 0)
	base := up.Commit("one")
	g := newGit(t, up.URL(), "")
	fetch(t, g)
	up.Skill("skills/two", "Second, pushed after the workspace synced.")
	tip := up.Commit("two")

	req := draftRequest(t, "pdf", "Read PDFs.", map[string]string{"scripts/run.sh": "#!/bin/sh\n"})
	req.Base = repository.Revision(base)
	res := publish(t, g, req)
	if res.Branch != "skillsync/pdf" || res.Direct || string(res.Base) != base || res.Path != "skills/pdf" {
		t.Fatalf("published = %+v", res)
	}
	if got := up.Git("rev-parse", "skillsync/pdf"); got != string(res.Commit) {
		t.Errorf("remote skillsync/pdf = %s, want %s", got, res.Commit)
	}
	if got := up.Git("rev-parse", "skillsync/pdf^"); got != base {
		t.Errorf("parent = %s, want the workspace's revision %s", got, base)
	}
	if got := up.Git("rev-parse", "main"); got != tip {
		t.Errorf("main moved to %s", got)
	}
	if got := up.Git("show", "skillsync/pdf:skills/pdf/SKILL.md"); !strings.Contains(got, "description: Read PDFs.") {
		t.Errorf("SKILL.md on the branch = %q", got)
	}
	if got := up.Git("ls-tree", "skillsync/pdf", "skills/pdf/scripts/run.sh"); !strings.HasPrefix(got, "100755 blob") {
		t.Errorf("run.sh = %q, want executable", got)
	}
	if got := up.Git("log", "-1", "--format=%an <%ae>|%B", "skillsync/pdf"); !strings.HasPrefix(got, "alice <alice@example.com>|Add pdf") || !strings.Contains(got, "Approved-by: alice") {
		t.Errorf("commit = %q", got)
	}
	// The rest of the tree is as it was; git fsck finds the objects whole.
	if got := up.Git("diff", "--name-only", base, "skillsync/pdf"); got != "skills/pdf/SKILL.md\nskills/pdf/scripts/run.sh" {
		t.Errorf("changed = %q", got)
	}
	up.Git("fsck", "--strict")

	// The branch is there now: a second publish of the name is refused.
	if _, err := g.Publish(context.Background(), req); !errors.Is(err, repository.ErrBranchExists) {
		t.Errorf("second publish = %v, want ErrBranchExists", err)
	}
	req.Branch = "review/pdf-2"
	if res := publish(t, g, req); res.Branch != "review/pdf-2" {
		t.Errorf("published with --branch = %+v", res)
	}
}

// TestPublishReplacesTheSkillWhereItIs: a skill of the name deeper in the
// repository is replaced in its own folder, with files it no longer has
// removed; the same files again are nothing to publish.
func TestPublishReplacesTheSkillWhereItIs(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("team/docs/pdf", "Old.")
	up.Write("team/docs/pdf/old.md", "old\n", 0)
	up.Commit("old pdf")
	g := newGit(t, up.URL(), "", func(c *git.GitConfig) { c.Path = "team" })
	req := draftRequest(t, "pdf", "New.", nil)
	res := publish(t, g, req)
	if res.Path != "team/docs/pdf" {
		t.Fatalf("path = %s", res.Path)
	}
	if got := up.Git("ls-tree", "-r", "--name-only", "skillsync/pdf"); got != "team/docs/pdf/SKILL.md" {
		t.Errorf("tree = %q", got)
	}
	up.Git("merge", "-q", "--ff-only", "skillsync/pdf")
	req.Branch = "again"
	if _, err := g.Publish(context.Background(), req); !errors.Is(err, repository.ErrNothingToPublish) {
		t.Errorf("publish of what is there = %v", err)
	}
}

// TestPublishDirectOverHTTP: with basic auth over smart HTTP, a direct
// publish fast-forwards the tracked branch; once the remote moved on past
// the workspace's revision, it is refused and the remote is untouched.
func TestPublishDirectOverHTTP(t *testing.T) {
	t.Parallel()
	up, first, _, g := servedWithToken(t)
	up.AcceptPushes()
	fetch(t, g)

	req := draftRequest(t, "pdf", "Read PDFs.", nil)
	req.Direct, req.Base = true, repository.Revision(first)
	res := publish(t, g, req)
	if res.Branch != "main" || !res.Direct {
		t.Fatalf("published = %+v", res)
	}
	if got := up.Git("rev-parse", "main"); got != string(res.Commit) {
		t.Errorf("main = %s, want %s", got, res.Commit)
	}
	if got := up.Git("rev-parse", "main^"); got != first {
		t.Errorf("parent = %s", got)
	}

	// Someone else pushes; the workspace still has res.Commit.
	up.Git("reset", "-q", "--hard", "main")
	up.Skill("skills/other", "Pushed by someone else.")
	theirs := up.Commit("theirs")
	req = draftRequest(t, "notes", "Take notes.", nil)
	req.Direct, req.Base = true, res.Commit
	_, err := g.Publish(context.Background(), req)
	if !errors.Is(err, repository.ErrNonFastForward) || !strings.Contains(err.Error(), "main is at "+theirs[:12]) {
		t.Fatalf("publish after the remote moved on = %v", err)
	}
	if got := up.Git("rev-parse", "main"); got != theirs {
		t.Errorf("a refused publish moved main to %s", got)
	}
	if strings.Contains(err.Error(), "s3cret-token") {
		t.Errorf("the token leaked: %v", err)
	}
}

// TestPublishWrongToken: a refused login names the setting to check and
// never the token; the remote is untouched.
func TestPublishWrongToken(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/one", "First.")
	head := up.Commit("one")
	_, url := up.ServeHTTP("r", "x-access-token", "right-password")
	g := newGitIn(t, []string{"TEAM_TOKEN=wrong-password-123"}, url, "", func(c *git.GitConfig) { c.Auth.PasswordEnv = "TEAM_TOKEN" })
	_, err := g.Publish(context.Background(), draftRequest(t, "pdf", "Read PDFs.", nil))
	if !errors.Is(err, git.ErrAuth) || !strings.Contains(err.Error(), "check password_env TEAM_TOKEN") {
		t.Fatalf("err = %v, want ErrAuth naming password_env", err)
	}
	if strings.Contains(err.Error(), "wrong-password-123") {
		t.Errorf("the token leaked: %v", err)
	}
	if got := up.Git("for-each-ref", "--format=%(refname)"); got != "refs/heads/main" || up.Head() != head {
		t.Errorf("refs after a refused login = %q", got)
	}
}

// TestPublishDirectNeedsABranch: a source pinned to a tag cannot take a
// direct publish.
func TestPublishDirectNeedsABranch(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	up.Git("tag", "v1")
	g := newGit(t, up.URL(), "v1")
	req := draftRequest(t, "pdf", "Read PDFs.", nil)
	req.Direct = true
	if _, err := g.Publish(context.Background(), req); err == nil || !strings.Contains(err.Error(), "is not a branch") {
		t.Errorf("direct publish to a tag = %v", err)
	}
}

// TestPublishNeverLeaksAnInlinePassword: a password in the URL that
// net/url cannot parse is redacted from a publish's error as it is from a
// fetch's.
func TestPublishNeverLeaksAnInlinePassword(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.AcceptPushes()
	up.Skill("skills/one", "First.")
	up.Commit("one")
	_, served := up.ServeHTTP("r", "x-access-token", "right-password")
	for _, secret := range []string{"wr/ong#pw 1", "wr%zzong"} {
		url := strings.Replace(served, "http://", "http://bob:"+secret+"@", 1)
		g := newGit(t, url, "")
		_, err := g.Publish(context.Background(), draftRequest(t, "pdf", "Read PDFs.", nil))
		if err == nil {
			t.Fatalf("publish with a wrong inline password succeeded")
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "wr") && strings.Contains(err.Error(), "ong") {
			t.Errorf("the inline password leaked: %v", err)
		}
	}
}
