package git_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/testmain"
	"github.com/skillsync/skillsync/repository/git"
)

// refFlood serves, over smart HTTP, a ref advertisement of HEAD, main and
// n tags, each tag's name padded to pad bytes, made as it is sent; the
// server holds none of it. Each line is made in one reused buffer, and the
// server stops once the client has hung up: the test binary's memory and
// CPU are the client's to spend.
func refFlood(t *testing.T, n, pad int) string {
	t.Helper()
	const sha = "49a8f6b659fc25ef9b55b48cee69f4a17fbefda2"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/info/refs") {
			http.Error(w, "no packs here", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		b := bufio.NewWriter(w)
		pkt := func(s string) { fmt.Fprintf(b, "%04x%s", len(s)+4, s) }
		pkt("# service=git-upload-pack\n")
		b.WriteString("0000")
		pkt(sha + " HEAD\x00multi_ack side-band-64k ofs-delta symref=HEAD:refs/heads/main\n")
		pkt(sha + " refs/heads/main\n")
		// The line of tag i, as pkt writes it: "%04x" of its length, then
		// "<sha> refs/tags/%0*d\n" of pad and i.
		const hex = "0123456789abcdef"
		line := []byte("0000" + sha + " refs/tags/")
		prefix := len(line)
		zeros := []byte(strings.Repeat("0", pad))
		var num []byte
		for i := 0; i < n; i++ {
			num = strconv.AppendInt(num[:0], int64(i), 10)
			line = line[:prefix]
			if len(num) < pad {
				line = append(line, zeros[len(num):]...)
			}
			line = append(append(line, num...), '\n')
			l := len(line)
			line[0], line[1], line[2], line[3] = hex[l>>12&15], hex[l>>8&15], hex[l>>4&15], hex[l&15]
			if _, err := b.Write(line); err != nil {
				return // the client hung up
			}
		}
		b.WriteString("0000")
		b.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/x.git"
}

// A server that advertises half a million refs (go-git held them all, 850
// bytes each: 2,000,000 took 1.8 GB) is refused once it is past the limit
// of refs, having cost a bounded read; so is one whose advertisement is
// past the limit of bytes in fewer, longer refs. The listing that checks
// for updates and the one that starts a fetch are both bounded.
func TestGitRefAdvertisementIsBounded(t *testing.T) {
	// It measures the memory of the whole process, which parallel tests
	// would add to: it runs in a process of its own, beside them.
	if testmain.OwnProcess(t) {
		return
	}
	for _, c := range []struct {
		name     string
		refs     int
		pad      int
		want     string
		fetching bool
	}{
		{"refs", 500_000, 20, fmt.Sprintf("more than %d refs", git.MaxAdvertisedRefs), true},
		{"refs", 500_000, 20, fmt.Sprintf("more than %d refs", git.MaxAdvertisedRefs), false},
		{"bytes", 2_000, 60_000, fmt.Sprintf("over %d bytes", git.MaxAdvertisementSize), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGit(t, refFlood(t, c.refs, c.pad), "")
			var err error
			n := allocated(func() {
				if c.fetching {
					_, err = g.Fetch(context.Background())
				} else {
					_, err = g.Upstream(context.Background())
				}
			})
			if !errors.Is(err, git.ErrSourceTooLarge) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrSourceTooLarge naming %q", err, c.want)
			}
			if n > 160<<20 {
				t.Errorf("the listing allocated %d MiB", n>>20)
			}
		})
	}
}

// A local repository's advertisement, read from git upload-pack, is
// bounded too: its output is counted and the process stopped.
func TestGitLocalRefAdvertisementIsBounded(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	head := up.Commit("one")
	up.PackedTags(head, git.MaxAdvertisedRefs+1, "t", 7)
	g := newGit(t, up.URL(), "")
	_, err := g.Fetch(context.Background())
	want := fmt.Sprintf("more than %d refs", git.MaxAdvertisedRefs)
	if !errors.Is(err, git.ErrSourceTooLarge) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want ErrSourceTooLarge naming %q", err, want)
	}
}
