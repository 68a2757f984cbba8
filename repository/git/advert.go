package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// A git server's first answer is its ref advertisement: every ref it has,
// one pkt-line each. go-git holds the whole list in memory, some 850
// bytes a ref, so a hostile server's 6 MB gzip'd advertisement of two
// million refs took 1.8 GB. The listing reads the advertisement through a
// counter that fails it past either limit below. (go-git's fetch, which
// follows a listing that passed, reads the advertisement once more through
// its own package-wide transports, which take no client per call: a
// server that answers the listing small and the fetch huge is not bounded
// here.)
const (
	// MaxAdvertisedRefs bounds the pkt-lines of a remote's ref
	// advertisement: its refs, and one more for each annotated tag.
	MaxAdvertisedRefs = 100_000
	// MaxAdvertisementSize bounds the bytes of a remote's ref
	// advertisement (after any content encoding is undone).
	MaxAdvertisementSize = 32 << 20
)

// sshOverhead is what SSH adds around an advertisement of n bytes on the
// wire: its handshake, and the framing of its packets. The relay counts
// encrypted bytes, so an advertisement within the limit passes with this
// much room.
func sshOverhead(n int64) int64 { return n/64 + 1<<20 }

// advertisementLimits is the pair of limits one listing reads under.
type advertisementLimits struct {
	bytes int64
	refs  int
}

var defaultAdvertisementLimits = advertisementLimits{bytes: MaxAdvertisementSize, refs: MaxAdvertisedRefs}

// listRefs lists the remote's refs, with annotated tags peeled, retrying
// transient failures. The advertisement is read under the limits above:
// over HTTP through a client made for this listing, whose response body
// is counted; from a local repository through git upload-pack's output;
// over SSH through relay, which cuts the connection past the limit in
// bytes (the encrypted stream cannot be counted in refs). Past a limit the
// listing fails with an error wrapping ErrSourceTooLarge.
func (g *Git) listRefs(ctx context.Context, remoteURL string, auth authMethod, relay *sshRelay) ([]*plumbing.Reference, error) {
	return listRefs(ctx, remoteURL, auth, relay, defaultAdvertisementLimits)
}

func listRefs(ctx context.Context, remoteURL string, auth authMethod, relay *sshRelay, lim advertisementLimits) ([]*plumbing.Reference, error) {
	var refs []*plumbing.Reference
	err := retry(ctx, func() error {
		ar, err := advertisedRefs(ctx, remoteURL, auth, relay, lim)
		if err != nil {
			return err
		}
		refs, err = referencesOf(ar)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list remote refs: %w", err)
	}
	return refs, nil
}

// advertisedRefs reads the remote's ref advertisement under lim.
func advertisedRefs(ctx context.Context, remoteURL string, auth authMethod, relay *sshRelay, lim advertisementLimits) (*packp.AdvRefs, error) {
	ep, err := transport.NewEndpoint(remoteURL)
	if err != nil {
		return nil, err
	}
	var tr transport.Transport
	var counted *limitedTripper
	switch ep.Protocol {
	case "file":
		return fileAdvertisement(ctx, ep.Path, lim)
	case "http", "https":
		counted = &limitedTripper{base: http.DefaultTransport, lim: lim}
		tr = githttp.NewClient(&http.Client{Transport: counted})
	default:
		// go-git's own transport, only read from, never replaced.
		if tr, err = client.NewClient(ep); err != nil {
			return nil, err
		}
		if relay != nil {
			ep.Proxy = relay.Proxy()
			relay.limit(lim.bytes + sshOverhead(lim.bytes))
			defer relay.limit(0)
		}
	}
	s, err := tr.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, err
	}
	ar, err := s.AdvertisedReferencesContext(ctx)
	s.Close()
	if counted != nil {
		if cerr := counted.err(); cerr != nil {
			return nil, cerr
		}
	}
	if relay != nil && relay.cut() {
		return nil, fmt.Errorf("%w: the remote's ref advertisement is over %d bytes", ErrSourceTooLarge, lim.bytes)
	}
	return ar, err
}

// referencesOf returns the refs of an advertisement and, for each
// annotated tag, the commit it peels to as "<tag>^{}", as go-git's
// Remote.List does with AppendPeeled.
func referencesOf(ar *packp.AdvRefs) ([]*plumbing.Reference, error) {
	all, err := ar.AllReferences()
	if err != nil {
		return nil, err
	}
	refs := make([]*plumbing.Reference, 0, len(all)+len(ar.Peeled))
	for _, r := range all {
		refs = append(refs, r)
	}
	for name, h := range ar.Peeled {
		refs = append(refs, plumbing.NewHashReference(plumbing.ReferenceName(name+"^{}"), h))
	}
	return refs, nil
}

// fileAdvertisement reads the advertisement of the repository at path:
// from its files where localAdvertisement can, else as go-git's file
// transport does, from git upload-pack, with the output counted and the
// process killed past a limit.
func fileAdvertisement(ctx context.Context, path string, lim advertisementLimits) (*packp.AdvRefs, error) {
	if ar, ok := localAdvertisement(path, lim); ok {
		return ar, nil
	}
	return uploadPackAdvertisement(ctx, path, lim)
}

// uploadPackAdvertisement reads the advertisement from git upload-pack.
func uploadPackAdvertisement(ctx context.Context, path string, lim advertisementLimits) (*packp.AdvRefs, error) {
	if strings.HasPrefix(path, "-") {
		path = "./" + path
	}
	cmd := exec.CommandContext(ctx, "git", "upload-pack", "--advertise-refs", path)
	var stderr headBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git upload-pack: %w", err)
	}
	// Buffered below the counter, which still counts what the decoder
	// reads: the decoder reads each pkt-line's length and then its
	// payload, two reads of the pipe a ref (200,000 system calls for
	// the 100,000 refs of MaxAdvertisedRefs).
	counted := &advertisementCounter{r: bufio.NewReaderSize(out, 64<<10), lim: lim}
	ar := packp.NewAdvRefs()
	err = ar.Decode(counted)
	if err != nil {
		// Stop the writer: the rest of its output is not wanted.
		cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case counted.err != nil:
		return nil, counted.err
	case errors.Is(err, packp.ErrEmptyAdvRefs):
		return nil, transport.ErrEmptyRemoteRepository
	case err != nil && strings.Contains(stderr.String(), "does not appear to be a git repository"):
		return nil, transport.ErrRepositoryNotFound
	case err != nil && stderr.Len() > 0:
		return nil, fmt.Errorf("git upload-pack: %s", strings.TrimSpace(stderr.String()))
	case err != nil:
		return nil, fmt.Errorf("read the ref advertisement: %w", err)
	case werr != nil:
		return nil, fmt.Errorf("git upload-pack: %w", werr)
	case ar.IsEmpty():
		return nil, transport.ErrEmptyRemoteRepository
	}
	return ar, nil
}

// headBuffer keeps the first 4 KiB written to it: enough of a process's
// error output to say what went wrong.
type headBuffer struct{ bytes.Buffer }

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := 4<<10 - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// limitedTripper is an http.RoundTripper whose ref advertisements (the
// answers to GET .../info/refs) are read through an advertisementCounter.
// It is made for one listing, so the error it records is that listing's.
type limitedTripper struct {
	base http.RoundTripper
	lim  advertisementLimits

	mu       sync.Mutex
	exceeded error
}

func (t *limitedTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/info/refs") {
		return res, err
	}
	res.Body = &countedBody{advertisementCounter{r: res.Body, lim: t.lim, failed: t.fail}, res.Body}
	return res, nil
}

func (t *limitedTripper) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exceeded == nil {
		t.exceeded = err
	}
}

func (t *limitedTripper) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exceeded
}

type countedBody struct {
	advertisementCounter
	body io.Closer
}

func (b *countedBody) Close() error { return b.body.Close() }

// advertisementCounter passes a ref advertisement through while counting
// its bytes and its pkt-lines, and fails the read past either limit. It
// follows the pkt-line framing as the bytes stream by, holding nothing;
// input that is not pkt-lines is counted in bytes only and left to the
// decoder to refuse.
type advertisementCounter struct {
	r      io.Reader
	lim    advertisementLimits
	failed func(error) // told of the error, if set

	read    int64
	lines   int
	header  [4]byte // a pkt-line's length, as hex digits
	nheader int     // how many of them were read so far
	left    int     // bytes of the current pkt-line's payload still to come
	opaque  bool    // the input is not pkt-lines
	err     error
}

func (c *advertisementCounter) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.count(p[:n])
	if c.err != nil {
		if c.failed != nil {
			c.failed(c.err)
		}
		return 0, c.err
	}
	return n, err
}

func (c *advertisementCounter) count(b []byte) {
	if c.read += int64(len(b)); c.read > c.lim.bytes {
		c.err = fmt.Errorf("%w: the remote's ref advertisement is over %d bytes", ErrSourceTooLarge, c.lim.bytes)
		return
	}
	for len(b) > 0 && !c.opaque {
		if c.left > 0 {
			k := min(c.left, len(b))
			c.left, b = c.left-k, b[k:]
			continue
		}
		k := copy(c.header[c.nheader:], b)
		c.nheader, b = c.nheader+k, b[k:]
		if c.nheader < 4 {
			continue
		}
		c.nheader = 0
		size, err := strconv.ParseUint(string(c.header[:]), 16, 16)
		switch {
		case err != nil:
			c.opaque = true
		case size > 4:
			c.left = int(size) - 4
			if c.lines++; c.lines > c.lim.refs {
				c.err = fmt.Errorf("%w: the remote advertises more than %d refs", ErrSourceTooLarge, c.lim.refs)
				return
			}
		}
	}
}
