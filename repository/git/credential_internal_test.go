package git

import (
	"context"
	"testing"
)

// For github.com, when git has no login, GH_TOKEN is taken, then
// GITHUB_TOKEN, as x-access-token; no other host gets either.
func TestEnvTokenChoice(t *testing.T) {
	for _, c := range []struct {
		host string
		env  []string
		from string
	}{
		{"github.com", []string{"GH_TOKEN=gh", "GITHUB_TOKEN=actions"}, "GH_TOKEN"},
		{"GitHub.com", []string{"GH_TOKEN=", "GITHUB_TOKEN=actions"}, "GITHUB_TOKEN"},
		{"github.com", []string{"GITHUB_TOKEN=actions"}, "GITHUB_TOKEN"},
		{"github.com", []string{"GH_TOKEN=old", "GH_TOKEN=new"}, "GH_TOKEN"},
		{"github.com", nil, ""},
		{"gitlab.com", []string{"GH_TOKEN=gh", "GITHUB_TOKEN=actions"}, ""},
		{"github.com.evil.example", []string{"GH_TOKEN=gh"}, ""},
	} {
		user, pass, from, ok := envToken(c.host, c.env)
		if from != c.from || ok != (c.from != "") {
			t.Errorf("envToken(%s, %v) from %q ok %v, want %q", c.host, c.env, from, ok, c.from)
			continue
		}
		if ok && (user != "x-access-token" || pass != lookup(c.env, from)) {
			t.Errorf("envToken(%s, %v) = %s:%s", c.host, c.env, user, pass)
		}
	}
}

// Where git is not installed, no helper is asked and nothing is said; for
// github.com the environment's token is still found.
func TestFindCredentialWithoutGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	env := []string{"GH_TOKEN=gh-token", "HOME=" + t.TempDir()}
	if c := findCredential(context.Background(), "https://example.com/team/skills.git", "", env); c != nil {
		t.Errorf("a login for example.com: %+v", c.from)
	}
	c := findCredential(context.Background(), "https://github.com/team/skills.git", "", env)
	if c == nil || c.from != "GH_TOKEN" || c.pass != "gh-token" || c.user != "x-access-token" || len(c.answer) != 0 {
		t.Fatalf("github.com without git: %+v", c)
	}
	if c.settle(context.Background(), "approve") {
		t.Error("a token from the environment was handed to git")
	}
}
