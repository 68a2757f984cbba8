package git

import (
	"github.com/skillsync/skillsync/internal/buildtest"

	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// For github.com over https, when git has no login, GH_TOKEN is taken,
// then GITHUB_TOKEN, as x-access-token; no other host gets either, nor
// github.com over plain http.
func TestEnvTokenChoice(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		host string
		env  []string
		from string
	}{
		{"https://github.com", []string{"GH_TOKEN=gh", "GITHUB_TOKEN=actions"}, "GH_TOKEN"},
		{"https://GitHub.com", []string{"GH_TOKEN=", "GITHUB_TOKEN=actions"}, "GITHUB_TOKEN"},
		{"https://github.com:443", []string{"GITHUB_TOKEN=actions"}, "GITHUB_TOKEN"},
		{"https://github.com", []string{"GH_TOKEN=old", "GH_TOKEN=new"}, "GH_TOKEN"},
		{"https://github.com", nil, ""},
		{"http://github.com", []string{"GH_TOKEN=gh", "GITHUB_TOKEN=actions"}, ""},
		{"https://gitlab.com", []string{"GH_TOKEN=gh", "GITHUB_TOKEN=actions"}, ""},
		{"https://github.com.evil.example", []string{"GH_TOKEN=gh"}, ""},
	} {
		u, err := url.Parse(c.host + "/team/skills.git")
		if err != nil {
			t.Fatal(err)
		}
		user, pass, from, ok := envToken(u, c.env)
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

// A description holding a carriage return never reaches git credential:
// a helper that ends lines at it would read a second key (a username
// "a\rhost=github.com" asking for github.com's login on evil.example).
func TestFillRefusesCarriageReturns(t *testing.T) {
	bin := t.TempDir()
	called := filepath.Join(t.TempDir(), "called")
	script := "#!/bin/sh\n/bin/cat > " + called + "\n"
	if err := buildtest.WriteProgram(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	for _, raw := range []string{
		"https://a%0dhost=github.com@evil.example/team/skills.git",
		"https://evil.example/team%0dhost=github.com/skills.git",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if c := fillCredential(context.Background(), u, u.User.Username(), []string{"PATH=" + bin}); c != nil {
			t.Errorf("%s: a login came back", raw)
		}
		if _, err := os.Stat(called); err == nil {
			data, _ := os.ReadFile(called)
			t.Fatalf("%s: git credential was asked with %q", raw, data)
		}
	}
	// The fake git is called for a clean description, so the checks above
	// can fail.
	u, _ := url.Parse("https://evil.example/team/skills.git")
	fillCredential(context.Background(), u, "", []string{"PATH=" + bin})
	if _, err := os.Stat(called); err != nil {
		t.Fatalf("the fake git was not run for a clean description: %v", err)
	}
}
