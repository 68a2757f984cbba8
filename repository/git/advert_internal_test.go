package git

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
)

// Over SSH the relay cuts a listing whose connection carries more than
// the advertisement's limit and SSH's own overhead; the limit is made
// small here so that the repository can be.
func TestGitSSHRefAdvertisementIsBounded(t *testing.T) {
	t.Parallel()
	srv := gittest.StartSSH(t)
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	head := up.Commit("one")
	const tags = 20_000 // each line 251 bytes: 5 MB in all
	up.PackedTags(head, tags, "", 200)
	g := NewGit(GitConfig{URL: srv.URL(up.Dir), StoreRoot: t.TempDir(), Auth: GitAuth{SSHKeyFile: srv.ClientKey, KnownHostsFile: srv.KnownHostsFile}}, repository.Options{})
	remoteURL, auth, err := g.auth()
	if err != nil {
		t.Fatal(err)
	}
	list := func(lim advertisementLimits) (int, error) {
		relay, err := g.route(context.Background(), remoteURL)
		if err != nil {
			t.Fatal(err)
		}
		defer relay.Close()
		refs, err := listRefs(context.Background(), remoteURL, auth, relay, lim)
		return len(refs), err
	}
	if n, err := list(defaultAdvertisementLimits); err != nil || n < tags {
		t.Fatalf("within the limits: %d refs, %v", n, err)
	}
	_, err = list(advertisementLimits{bytes: 1 << 20, refs: MaxAdvertisedRefs})
	if !errors.Is(err, ErrSourceTooLarge) || !strings.Contains(err.Error(), "over 1048576 bytes") {
		t.Errorf("err = %v, want ErrSourceTooLarge naming the limit", err)
	}
}
