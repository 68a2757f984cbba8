package git_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/buildtest"
	"github.com/skillsync/skillsync/internal/gittest"
)

// TestFetchShowsTheRemotesError: a remote that sends a broken pack after
// saying why (on its progress channel, as upload-pack relays
// pack-objects' stderr) fails the fetch with its own words, not only
// go-git's "checksum does not match".
func TestFetchShowsTheRemotesError(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	root := filepath.Dir(up.Dir)
	name := filepath.Base(up.Dir)
	hook := filepath.Join(t.TempDir(), "hook.sh")
	script := `#!/bin/sh
echo "fatal: pack volume is out of quota (ticket 4711)" >&2
tmp=$(mktemp)
"$@" > "$tmp"
size=$(wc -c < "$tmp")
head -c $((size - 1)) "$tmp"
printf 'Z'
rm -f "$tmp"
`
	if err := buildtest.WriteProgram(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := gittest.ServeHTTPEnv(t, root, "", "", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=uploadpack.packObjectsHook", "GIT_CONFIG_VALUE_0="+hook)
	g := newGit(t, srv.URL+"/"+name, "")
	_, err := g.Fetch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "pack volume is out of quota (ticket 4711)") {
		t.Fatalf("err = %v, want the remote's own message", err)
	}
	t.Log(err)
}

// TestFetchOfAMissingRepositorySaysWhatToCheck: a remote with no such
// repository names the source's URL to check, and, over the network,
// the login too: hosts answer a reader of a private repository without
// credentials the same way.
func TestFetchOfAMissingRepositorySaysWhatToCheck(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	srv := gittest.ServeHTTP(t, filepath.Dir(up.Dir), "", "")
	for _, tc := range []struct {
		name, url string
		login     bool
	}{
		{"file", "file://" + filepath.Join(t.TempDir(), "gone.git"), false},
		{"http", srv.URL + "/gone.git", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newGitIn(t, []string{}, tc.url, "").Fetch(context.Background())
			if err == nil {
				t.Fatal("fetch of a missing repository succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, "repository not found: check the git: URL of source team") {
				t.Errorf("err = %v, want the source's URL named to check", err)
			}
			if got := strings.Contains(msg, "private repository"); got != tc.login {
				t.Errorf("login named = %v, want %v: %v", got, tc.login, err)
			}
		})
	}
}
