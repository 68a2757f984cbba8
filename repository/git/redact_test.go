package git_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
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
		{"https://us@er:p@ss@host/x?a@b", "https://***@host/x?***", true},
		{"HTTPS://user:pw@host", "HTTPS://***@host", true},
		// Tokens in the query string or the fragment.
		{"https://host/x.git?access_token=s3cret", "https://host/x.git?access_token=***", false},
		{"https://host/x.git?a=1&private_token=s3cret&b=", "https://host/x.git?a=***&private_token=***&b=", false},
		{"https://host/x.git?s3cret", "https://host/x.git?***", false},
		{"https://host/x.git#s3cret", "https://host/x.git#***", false},
		{"https://host/x.git?sig=s3cret#tok3n", "https://host/x.git?sig=***#***", false},
		{"https://host/x.git?#", "https://host/x.git?#", false},
		{"https://user:pw@host/x?token=s3cret", "https://***@host/x?token=***", true},
		{"https://user:pa?ss@host/x?sig=s3cret", "https://***@host/x?sig=***", true},
		{"https://host/x%zz?token=s3cret", "https://host/x%zz?token=***", false}, // does not parse
		{"git@host:x.git?token=s3cret", "git@host:x.git?token=***", false},
	} {
		if got := repository.RedactURL(tt.url); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
		if got := repository.HasInlinePassword(tt.url); got != tt.password {
			t.Errorf("HasInlinePassword(%q) = %v, want %v", tt.url, got, tt.password)
		}
		key := git.StoreKey(tt.url)
		for _, secret := range []string{"s3cret", "pa", "pw", "tok3n", "zz", "34"} {
			if secret == "zz" && strings.Contains(tt.url, "x%zz?") {
				continue // part of the path, not a secret
			}
			if strings.Contains(tt.url, secret) && strings.Contains(key, secret) && !strings.Contains(tt.want, secret) {
				t.Errorf("StoreKey(%q) = %q shows %q", tt.url, key, secret)
			}
		}
	}
}

// A fetch from a URL with a password that net/url cannot parse, or with
// a token in its query string or fragment, fails without showing any of
// the secret, in its message or anywhere else.
func TestGitErrorsHideUnparsablePasswords(t *testing.T) {
	t.Parallel()
	for i, url := range []string{
		"https://user:Sup3r/Secr#t@127.0.0.1:1/r",
		"https://user:Sup3r%zzSecr@127.0.0.1:1/r",
		"https://user:Sup3r Secr@127.0.0.1:1/r",
		"http://user:Sup3rSecr@127.0.0.1:1/r", // parses; the dial fails
		"http://127.0.0.1:1/r.git?access_token=Sup3rSecr",
		"http://127.0.0.1:1/r.git?a=1&private_token=Sup3r%2FSecr",
		"http://127.0.0.1:1/r.git#Sup3rSecr",
		"http://127.0.0.1:1/r\x7f?sig=Sup3rSecr", // does not parse
	} {
		// Each fetch that reaches the dial is retried for 2.5 s: the
		// URLs run side by side. The subtests are named by number, not
		// by the secrets in their URLs.
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
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
		})
	}
}

// A name derived from a remote leaves out its credentials, query and
// fragment: it is printed and written into the config.
func TestRepoName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, want string }{
		{"https://host/acme/skills.git", "skills"},
		{"git@host:acme/skills.git", "skills"},
		{"https://host/acme/skills.git/", "skills"},
		{"https://host/x.git#S3CR3T", "x"},
		{"https://host/x.git?access_token=S3CR3T", "x"},
		{"https://user:pa#ss@host/x.git", "x"},
		{"https://user:S3CR3T/x@host/skills.git", "skills"},
	} {
		if got := repository.RepoName(tt.url); got != tt.want {
			t.Errorf("RepoName(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}
