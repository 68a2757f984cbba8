package repository

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/skillsync/skillsync/internal/lockfile"
	"github.com/skillsync/skillsync/skill"
)

// DefaultTimeout bounds one source's fetch when the config sets none.
const DefaultTimeout = 60 * time.Second

// ErrNotFetched is returned by Skills for a git source whose wanted ref
// has never been fetched on this machine.
var ErrNotFetched = errors.New("not fetched yet: run skillsync fetch")

// GitConfig describes one git source.
type GitConfig struct {
	Source string
	// URL is the remote: https://, ssh://, git@host:path or file://.
	URL string
	// Ref is a branch, a tag or a full commit SHA; "" is the remote's
	// default branch.
	Ref string
	// Path is the folder of skills inside the repository; "" means skills/
	// when the commit has one, else the root.
	Path string
	// Depth limits history fetched; 0 fetches all of it.
	Depth   int
	Timeout time.Duration
	// MaxSourceSize caps the bytes one fetch may download (the packed
	// size); a larger download fails the fetch and leaves the store as it
	// was. 0 means DefaultMaxSourceSize, a negative value no limit.
	MaxSourceSize int64
	Auth          GitAuth
	// StoreRoot holds the bare stores, one per remote; "" is
	// DefaultStoreRoot().
	StoreRoot string
	// Progress receives git's progress messages; nil discards them.
	Progress io.Writer
}

// Git is a source read from a git remote. Fetch brings a bare store under
// StoreRoot up to date; Skills reads the fetched commit's tree straight
// from the store, with no network and no checkout.
type Git struct {
	cfg   GitConfig
	opts  Options
	store string
}

// NewGit returns a Git source. Nothing is read until Fetch or Skills.
func NewGit(cfg GitConfig, opts Options) *Git {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.StoreRoot == "" {
		cfg.StoreRoot = DefaultStoreRoot()
	}
	if cfg.MaxSourceSize == 0 {
		cfg.MaxSourceSize = DefaultMaxSourceSize
	}
	return &Git{cfg: cfg, opts: opts, store: filepath.Join(cfg.StoreRoot, StoreKey(cfg.URL))}
}

// DefaultStoreRoot is $XDG_CACHE_HOME/skillsync/git, shared by every
// workspace of the user on this machine.
func DefaultStoreRoot() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "skillsync", "git")
}

var unsafeKey = regexp.MustCompile(`[^a-z0-9._-]+`)

// StoreKey names the store of a remote: readable host and path, then a
// hash of the URL without credentials, so two tokens for one remote share
// a store and no token ever appears in a path.
func StoreKey(remote string) string {
	clean := stripCredentials(remote)
	sum := sha256.Sum256([]byte(clean))
	label := clean
	if u, err := url.Parse(clean); err == nil && u.Host != "" {
		label = u.Host + u.Path
	} else if i := strings.Index(clean, "@"); i >= 0 {
		label = clean[i+1:]
	}
	label = strings.Trim(unsafeKey.ReplaceAllString(strings.ToLower(label), "-"), "-.")
	if len(label) > 60 {
		label = label[len(label)-60:]
	}
	return label + "-" + hex.EncodeToString(sum[:6])
}

// RepoName derives a source name from a remote: "acme/skills.git" gives
// "skills".
func RepoName(remote string) string {
	s := strings.TrimRight(remote, "/")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSuffix(s, ".git")
}

// Source returns the source's name.
func (g *Git) Source() string { return g.cfg.Source }

// URL returns the remote with its credentials redacted.
func (g *Git) URL() string { return RedactURL(g.cfg.URL) }

// StoreDir returns the directory of the bare store.
func (g *Git) StoreDir() string { return g.store }

// FetchResult is what one fetch did.
type FetchResult struct {
	Revision Revision
	// Updated is set when the revision differs from the one fetched before.
	Updated bool
}

// Sync fetches and returns the revision; see Fetch.
func (g *Git) Sync(ctx context.Context) (Revision, error) {
	r, err := g.Fetch(ctx)
	return r.Revision, err
}

// Fetch resolves the wanted ref on the remote and brings its commit into
// the store. It lists the remote's refs first, and when that commit is
// already in the store it fetches nothing. A failed fetch leaves the
// previous revision in place.
func (g *Git) Fetch(ctx context.Context) (FetchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	res, err := g.fetch(ctx)
	if err != nil {
		err = g.explain(ctx, err)
	}
	return res, err
}

func (g *Git) fetch(ctx context.Context) (FetchResult, error) {
	if err := os.MkdirAll(g.cfg.StoreRoot, 0o755); err != nil {
		return FetchResult{}, err
	}
	lock, err := lockfile.Acquire(ctx, g.store+".lock", g.cfg.Timeout)
	if err != nil {
		return FetchResult{}, err
	}
	defer lock.Close()
	repo, err := g.openStore(true, false)
	if err != nil {
		return FetchResult{}, err
	}
	local := g.localRef()
	before, _ := repo.Reference(local, true)
	if fullSHA.MatchString(g.cfg.Ref) && hasCommit(repo, plumbing.NewHash(g.cfg.Ref)) {
		// A commit never changes: once it is here, the remote is not asked.
		commit := plumbing.NewHash(g.cfg.Ref)
		return FetchResult{Revision: Revision(commit.String()), Updated: before == nil}, g.settle(repo, commit, local)
	}
	remoteURL, auth, err := g.auth()
	if err != nil {
		return FetchResult{}, err
	}
	via, done, err := g.route(ctx, remoteURL)
	if err != nil {
		return FetchResult{}, err
	}
	defer done()
	remote := git.NewRemote(repo.Storer, &config.RemoteConfig{Name: "origin", URLs: []string{remoteURL}})
	var refs []*plumbing.Reference
	err = retry(ctx, func() error {
		var err error
		refs, err = remote.ListContext(ctx, &git.ListOptions{Auth: auth, PeelingOption: git.AppendPeeled, ProxyOptions: via})
		return err
	})
	if err != nil {
		return FetchResult{}, fmt.Errorf("list remote refs: %w", err)
	}
	want, err := g.want(refs)
	if err != nil {
		return FetchResult{}, err
	}
	commit := want.commit
	if commit.IsZero() || !hasCommit(repo, commit) {
		if err := g.download(ctx, repo, remoteURL, auth, via, want, local); err != nil {
			return FetchResult{}, err
		}
		if want.remoteRef != "" {
			// The ref may have moved since the listing: take what came.
			if ref, err := repo.Reference(local, true); err == nil {
				commit, err = peel(repo, ref.Hash())
				if err != nil {
					return FetchResult{}, err
				}
			}
		}
	}
	if err := g.settle(repo, commit, local); err != nil {
		return FetchResult{}, err
	}
	updated := before == nil || before.Hash() != commit
	return FetchResult{Revision: Revision(commit.String()), Updated: updated}, nil
}

// route returns the proxy options that bind every connection of a fetch
// from remoteURL to ctx, and a function to call when the fetch is done.
// go-git's HTTP and file transports honour the context; its SSH
// transport does not, so SSH goes through an sshRelay.
func (g *Git) route(ctx context.Context, remoteURL string) (transport.ProxyOptions, func(), error) {
	ep, err := transport.NewEndpoint(remoteURL)
	if err != nil || ep.Protocol != "ssh" {
		return transport.ProxyOptions{}, func() {}, nil
	}
	relay, err := startSSHRelay(ctx)
	if err != nil {
		return transport.ProxyOptions{}, nil, err
	}
	return relay.Proxy(), relay.Close, nil
}

// wanted is a resolved ref: what to ask the remote for, and the commit it
// points to when the listing says so.
type wanted struct {
	remoteRef plumbing.ReferenceName // "" for a bare commit SHA
	commit    plumbing.Hash
}

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

func (g *Git) want(refs []*plumbing.Reference) (wanted, error) {
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	hashOf := func(name plumbing.ReferenceName) (plumbing.Hash, bool) {
		if peeled, ok := byName[name+"^{}"]; ok {
			return peeled.Hash(), true
		}
		r, ok := byName[name]
		if !ok || r.Type() != plumbing.HashReference {
			return plumbing.ZeroHash, false
		}
		return r.Hash(), true
	}
	ref := g.cfg.Ref
	switch {
	case ref == "":
		head, ok := byName[plumbing.HEAD]
		if !ok {
			return wanted{}, errors.New("the remote has no HEAD: it is empty, or set ref: to a branch")
		}
		if head.Type() == plumbing.SymbolicReference {
			h, ok := hashOf(head.Target())
			if !ok {
				return wanted{}, fmt.Errorf("the remote's HEAD points to %s, which does not exist", head.Target())
			}
			return wanted{remoteRef: head.Target(), commit: h}, nil
		}
		return wanted{remoteRef: plumbing.HEAD, commit: head.Hash()}, nil
	case fullSHA.MatchString(ref):
		return wanted{commit: plumbing.NewHash(ref)}, nil
	}
	for _, name := range []plumbing.ReferenceName{
		plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref), plumbing.ReferenceName(ref),
	} {
		if h, ok := hashOf(name); ok {
			return wanted{remoteRef: name, commit: h}, nil
		}
	}
	return wanted{}, fmt.Errorf("ref %q is not on the remote: no such branch or tag (deleted?)", ref)
}

// localRef is where the store keeps this source's commit. Each wanted ref
// has its own, since workspaces sharing a store may want different ones.
func (g *Git) localRef() plumbing.ReferenceName {
	switch ref := g.cfg.Ref; {
	case ref == "":
		return "refs/skillsync/default"
	case fullSHA.MatchString(ref):
		return plumbing.ReferenceName("refs/skillsync/commit/" + ref)
	default:
		return plumbing.ReferenceName("refs/skillsync/ref/" + strings.TrimPrefix(ref, "refs/"))
	}
}

// download fetches the wanted ref into local. Pull is never used: a
// shallow pull in go-git v5 fails with "object not found" after two
// upstream commits, while a forced fetch into our own ref does not.
func (g *Git) download(ctx context.Context, repo *git.Repository, remoteURL string, auth authMethod, via transport.ProxyOptions, want wanted, local plumbing.ReferenceName) error {
	src := string(want.remoteRef)
	if src == "" {
		src = want.commit.String()
	}
	depth := g.cfg.Depth
	if hasRevisions(repo) {
		// The store already holds a commit of this remote. A depth-limited
		// fetch would make the server send the new commit's whole tree
		// again; without one, the server stops at the commits the store
		// has and sends only what is new (380 KiB instead of 32 MiB for a
		// 1% change of the medium benchmark corpus).
		depth = 0
	}
	opts := &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec("+" + src + ":" + string(local))},
		Depth:    depth,
		Auth:     auth,
		Progress: g.cfg.Progress,
		Tags:     git.NoTags,
		Force:    true,
		// The relay of an SSH fetch, if any.
		ProxyOptions: via,
	}
	err := retry(ctx, func() error { return g.fetchPack(ctx, repo, remoteURL, opts) })
	if errors.Is(err, git.ErrExactSHA1NotSupported) {
		// The server will not hand out a commit by its hash; fetch every
		// branch and tag with full history and look for it there.
		opts.RefSpecs = []config.RefSpec{"+refs/heads/*:refs/skillsync/all/heads/*", "+refs/tags/*:refs/skillsync/all/tags/*"}
		opts.Depth = 0
		err = retry(ctx, func() error { return g.fetchPack(ctx, repo, remoteURL, opts) })
		if err == nil && !hasCommit(repo, want.commit) {
			return fmt.Errorf("commit %s is on no branch or tag of the remote", want.commit)
		}
	}
	if err != nil {
		return fmt.Errorf("fetch %s: %w", src, err)
	}
	return nil
}

// fetchPack runs one fetch into repo. The pack it receives is indexed by
// a packReceiver, which bounds its size and the memory indexing takes.
func (g *Git) fetchPack(ctx context.Context, repo *git.Repository, remoteURL string, opts *git.FetchOptions) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var received []*packReceiver
	st := &fetchStorer{Storer: repo.Storer, receive: func() (*packReceiver, error) {
		p, err := newPackReceiver(ctx, stop, g.store, g.cfg.MaxSourceSize)
		if err == nil {
			received = append(received, p)
		}
		return p, err
	}}
	remote := git.NewRemote(st, &config.RemoteConfig{Name: "origin", URLs: []string{remoteURL}})
	err := ignoreUpToDate(remote.FetchContext(ctx, opts))
	for _, p := range received {
		if perr := p.Err(); perr != nil {
			// The transfer was stopped for this reason; go-git may only
			// say it was cancelled.
			err = perr
		}
	}
	if st, ok := repo.Storer.(interface{ Reindex() }); ok {
		// The receiver wrote the pack behind go-git's back.
		st.Reindex()
	}
	return err
}

// hasRevisions reports whether the store holds a commit fetched before.
func hasRevisions(repo *git.Repository) bool {
	refs, err := repo.References()
	if err != nil {
		return false
	}
	defer refs.Close()
	found := false
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		if strings.HasPrefix(string(r.Name()), "refs/skillsync/") && r.Type() == plumbing.HashReference && hasCommit(repo, r.Hash()) {
			found = true
			return storer.ErrStop
		}
		return nil
	})
	return found
}

func ignoreUpToDate(err error) error {
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

// settle points local at commit, the revision Skills reads from now on.
func (g *Git) settle(repo *git.Repository, commit plumbing.Hash, local plumbing.ReferenceName) error {
	if !hasCommit(repo, commit) {
		return fmt.Errorf("commit %s is not in the store after the fetch", commit)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(local, commit)); err != nil {
		return fmt.Errorf("record revision: %w", err)
	}
	return nil
}

// peel follows annotated tags to the commit they name.
func peel(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for i := 0; i < 10; i++ {
		tag, err := repo.TagObject(h)
		if err != nil {
			return h, nil
		}
		h = tag.Target
	}
	return h, errors.New("tag chain too long")
}

// hasCommit reports whether the commit and its tree are in the store.
func hasCommit(repo *git.Repository, h plumbing.Hash) bool {
	c, err := repo.CommitObject(h)
	if err != nil {
		return false
	}
	_, err = c.Tree()
	return err == nil
}

// openStore opens the bare store, creating it when create is set. Pack
// files stay open between object reads (up to a bound): reopening one for
// every blob was a third of a cold sync's time. For a reader,
// ExclusiveAccess lets go-git list the store's files once instead of
// trying to open a loose object before every packed read; writers hold
// the store's lock, and a reader lists the store after reading its ref
// under the shared lock. A writer lists them again after each fetch.
// Blobs are read through packedObjects, not go-git, which would hold a
// large one whole.
func (g *Git) openStore(create, reader bool) (*git.Repository, error) {
	if _, err := os.Stat(filepath.Join(g.store, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, ErrNotFetched
		}
		if _, err := git.PlainInit(g.store, true); err != nil && !errors.Is(err, git.ErrRepositoryAlreadyExists) {
			return nil, fmt.Errorf("create git store %s: %w", g.store, err)
		}
	}
	// A small object cache: trees are read again and again, blobs once
	// each, and go-git's default of 96 MiB filled with blobs doubled the
	// peak memory of a cold sync.
	st := filesystem.NewStorageWithOptions(osfs.New(g.store), cache.NewObjectLRU(16*cache.MiByte), filesystem.Options{
		MaxOpenDescriptors: 16, ExclusiveAccess: reader,
	})
	repo, err := git.Open(st, nil)
	if err != nil {
		return nil, fmt.Errorf("open git store %s: %w", g.store, err)
	}
	return repo, nil
}

// Current returns the revision last fetched for the wanted ref, without
// network.
func (g *Git) Current(ctx context.Context) (Revision, error) {
	_, c, err := g.commit(ctx)
	if err != nil {
		return "", err
	}
	return Revision(c.Hash.String()), nil
}

func (g *Git) commit(ctx context.Context) (*git.Repository, *object.Commit, error) {
	repo, err := g.openStore(false, true)
	if err != nil {
		return nil, nil, err
	}
	// A shared lock keeps this read from meeting a ref half rewritten by
	// a fetch in another process.
	lock, err := lockfile.AcquireShared(ctx, g.store+".lock", g.cfg.Timeout)
	if err != nil {
		return nil, nil, err
	}
	ref, err := repo.Reference(g.localRef(), true)
	lock.Close()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil, ErrNotFetched
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, nil, fmt.Errorf("read commit %s: %w", ref.Hash(), err)
	}
	return repo, c, nil
}

// Skills reads the skills at the last fetched commit.
func (g *Git) Skills(ctx context.Context) ([]skill.Skill, []skill.Problem, error) {
	fsys, err := g.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	return Discover(ctx, fsys, g.cfg.Source, RepoName(g.cfg.URL), g.opts)
}

// FS returns the folder of skills at the last fetched commit.
func (g *Git) FS(ctx context.Context) (*TreeFS, error) {
	_, c, err := g.commit(ctx)
	if err != nil {
		return nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", c.Hash, err)
	}
	root := NewTreeFS(tree, c.Committer.When)
	if root.blobs, err = openPackedObjects(g.store); err != nil {
		return nil, fmt.Errorf("read git store %s: %w", g.store, err)
	}
	root.maxFileSize = g.opts.MaxFileSize
	dir := g.cfg.Path
	if dir == "" {
		if info, err := root.Stat("skills"); err == nil && info.IsDir() {
			dir = "skills"
		}
	}
	if dir == "" || dir == "." {
		return root, nil
	}
	sub, err := root.Sub(path.Clean(dir))
	if err != nil {
		return nil, fmt.Errorf("path %s at %s: %w", dir, c.Hash.String()[:12], err)
	}
	return sub.(*TreeFS), nil
}

var _ Repository = (*Git)(nil)
