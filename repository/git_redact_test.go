package repository_test

import (
	"context"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository"
)

func TestRedactURL(t *testing.T) {
	for _, tt := range []struct {
		url, want string
		password  bool
	}{
		{"https://user:s3cret@host/acme/skills.git", "https://***@host/acme/skills.git", true},
		{"https://tok3n@host/x", "https://***@host/x", false}, // a token given as the user name
		{"https://host/acme/skills.git", "https://host/acme/skills.git", false},
		{"ssh://git@host/x", "ssh://git@host/x", false},
		{"ssh://git:pw@host/x", "ssh://***@host/x", true},
		{"git@github.com:acme/skills.git", "git@github.com:acme/skills.git", false},
		{"user:pa/ss@host:acme/x", "***@host:acme/x", true},
		{"user:p@ss@host:acme/x@y", "***@host:acme/x@y", true},
		{"/srv/git/a@b:c", "/srv/git/a@b:c", false},
		{"file:///srv/git/a@b", "file:///srv/git/a@b", false},
		{"https://host/path@v1", "https://host/path@v1", false},
		// What net/url cannot parse, or parses wrongly.
		{"https://user:pa/ss@host/x", "https://***@host/x", true},
		{"https://user:pa#ss@host/x", "https://***@host/x", true},
		{"https://user:pa?ss@host/x", "https://***@host/x", true},
		{"https://user:pa ss@host/x", "https://***@host/x", true},
		{"https://user:pa%zzss@host/x", "https://***@host/x", true},
		{"https://user:12/34@host/x", "https://***@host/x", true}, // parses as host "user", port 12
		{"https://us@er:p@ss@host/x?a@b", "https://***@host/x?a@b", true},
		{"HTTPS://user:pw@host", "HTTPS://***@host", true},
	} {
		if got := repository.RedactURL(tt.url); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
		if got := repository.HasInlinePassword(tt.url); got != tt.password {
			t.Errorf("HasInlinePassword(%q) = %v, want %v", tt.url, got, tt.password)
		}
		key := repository.StoreKey(tt.url)
		for _, secret := range []string{"s3cret", "pa", "pw", "tok3n", "zz", "34"} {
			if strings.Contains(tt.url, secret) && strings.Contains(key, secret) && !strings.Contains(tt.want, secret) {
				t.Errorf("StoreKey(%q) = %q shows %q", tt.url, key, secret)
			}
		}
	}
}

// A fetch from a URL with a password that net/url cannot parse fails
// without showing any of the password, in its message or anywhere else.
func TestGitErrorsHideUnparsablePasswords(t *testing.T) {
	for _, url := range []string{
		"https://user:Sup3r/Secr#t@127.0.0.1:1/r",
		"https://user:Sup3r%zzSecr@127.0.0.1:1/r",
		"https://user:Sup3r Secr@127.0.0.1:1/r",
		"http://user:Sup3rSecr@127.0.0.1:1/r", // parses; the dial fails
	} {
		g := newGit(t, url, "")
		_, err := g.Fetch(context.Background())
		if err == nil {
			t.Fatalf("%s: fetched", url)
		}
		for _, shown := range []string{err.Error(), g.URL(), g.StoreDir()} {
			for _, part := range []string{"Sup3r", "Secr", "%zz"} {
				if strings.Contains(shown, part) {
					t.Errorf("%q shows %q", shown, part)
				}
			}
		}
	}
}
