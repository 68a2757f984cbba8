package git_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/buildtest"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository/git"
)

// credentialHome makes a HOME whose .gitconfig sets helpers, and returns
// the environment git runs in with it: no system config, no prompts of
// the machine running the tests.
func credentialHome(t *testing.T, helpers ...string) []string {
	t.Helper()
	home := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("[credential]\n")
	for _, h := range helpers {
		cfg.WriteString("\thelper = " + h + "\n")
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
}

func readStore(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(data)
}

// A private remote that git reaches through the user's credential helper
// works with no auth: block, and the login the remote took is approved:
// the second helper, a store file, is handed it as git clone would.
func TestGitCredentialHelperLogin(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	_, url := up.ServeHTTP("r", "alice", "helper-secret-789")
	store := filepath.Join(t.TempDir(), "credentials")
	helper := filepath.Join(t.TempDir(), "give-login")
	script := "#!/bin/sh\ntest \"$1\" = get && printf 'username=alice\\npassword=helper-secret-789\\n'\nexit 0\n"
	if err := buildtest.WriteProgram(helper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := credentialHome(t, helper, "store --file "+store)
	g := newGit(t, url, "", func(c *git.GitConfig) { c.Env = env })
	res := fetch(t, g)
	if string(res.Revision) != up.Head() {
		t.Errorf("revision = %s, want %s", res.Revision, up.Head())
	}
	if got := readStore(t, store); !strings.Contains(got, "alice:helper-secret-789@127.0.0.1") {
		t.Errorf("git credential approve did not reach the store helper: %q", got)
	}
	if _, err := g.Upstream(context.Background()); err != nil {
		t.Errorf("upstream: %v", err)
	}
}

// A stored login the remote refuses is rejected (the store helper erases
// it) and the error names the source and the URL, never the password.
func TestGitCredentialHelperRefusedIsRejected(t *testing.T) {
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	srv, url := up.ServeHTTP("r", "alice", "right-secret")
	store := filepath.Join(t.TempDir(), "credentials")
	host := strings.TrimPrefix(srv.URL, "http://")
	if err := os.WriteFile(store, []byte("http://alice:stale-secret-321@"+host+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := newGit(t, url, "", func(c *git.GitConfig) { c.Env = credentialHome(t, "store --file "+store) })
	_, err := g.Fetch(context.Background())
	if !errors.Is(err, git.ErrAuth) {
		t.Fatalf("err = %v, want ErrAuth", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "source team") || !strings.Contains(msg, url) || !strings.Contains(msg, "git credential reject removed it") {
		t.Errorf("message = %q", msg)
	}
	if strings.Contains(msg, "stale-secret-321") {
		t.Errorf("the password leaked: %q", msg)
	}
	if got := readStore(t, store); strings.Contains(got, "stale-secret-321") {
		t.Errorf("git credential reject left the refused login in the store: %q", got)
	}
}

// With no helper and no token, the remote's refusal is the error, saying
// that nothing gave a login.
func TestGitCredentialNoneFound(t *testing.T) {
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	_, url := up.ServeHTTP("r", "alice", "right-secret")
	env := append(credentialHome(t), "GH_TOKEN=not-for-this-host")
	g := newGit(t, url, "", func(c *git.GitConfig) { c.Env = env })
	_, err := g.Fetch(context.Background())
	if !errors.Is(err, git.ErrAuth) || !strings.Contains(err.Error(), "credential helpers gave none") {
		t.Fatalf("err = %v, want ErrAuth saying no helper gave a login", err)
	}
	if strings.Contains(err.Error(), "not-for-this-host") {
		t.Errorf("a token leaked: %v", err)
	}
}
