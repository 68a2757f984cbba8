package git

import (
	"github.com/skillsync/skillsync/internal/hostenv"

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
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// GitConfig describes one git source.
type GitConfig struct {
	Source string
	// URL is the remote: https://, ssh://, git@host:path or file://.
	URL string
	// Ref is a branch, a tag or a full commit SHA; "" is the remote's
	// default branch.
	Ref string
	// Path is the folder of skills inside the repository; "" is the root,
	// where discovery looks in the places repositories keep skills
	// (skills/, .claude/skills/, a plugin marketplace, ...).
	Path string
	// Depth limits history fetched; 0 fetches all of it.
	Depth   int
	Timeout time.Duration
	// MaxFetchSize caps the bytes one fetch may download (the packed
	// size); a larger download fails the fetch and leaves the store as it
	// was. 0 means DefaultMaxFetchSize, a negative value no limit.
	MaxFetchSize int64
	Auth         GitAuth
	// StoreRoot holds the bare stores, one per remote; "" is
	// DefaultStoreRoot().
	StoreRoot string
	// Progress receives git's progress messages; nil discards them.
	Progress io.Writer
	// Env is the environment git's credential helpers run in and
	// GH_TOKEN/GITHUB_TOKEN are read from, for a remote whose config
	// gives no login; nil is the program's.
	Env []string
}

// Git is a source read from a git remote. Fetch brings a bare store under
// StoreRoot up to date; Skills reads the fetched commit's tree straight
// from the store, with no network and no checkout.
type Git struct {
	cfg   GitConfig
	opts  repository.Options
	store string

	mu sync.Mutex
	// packs are the store's packs as FS last found them, their indexes
	// read and their files kept open for every read until Close.
	packs *packedObjects
	// spools hold, whole, the objects the last download inflated to
	// index them, for the FS to read them from until Close.
	spools objectSpools
	// settled is the commit this source reads: the one its last Fetch
	// settled on and reported, or, before one, the first head read from
	// the store's ref (settleOn); zero until either.
	settled plumbing.Hash
}

// NewGit returns a Git source. Nothing is read until Fetch or Skills.
func NewGit(cfg GitConfig, opts repository.Options) *Git {
	if cfg.Timeout <= 0 {
		cfg.Timeout = repository.DefaultTimeout
	}
	if cfg.StoreRoot == "" {
		cfg.StoreRoot = storeRoot(opts.Env)
	}
	if cfg.MaxFetchSize == 0 {
		cfg.MaxFetchSize = DefaultMaxFetchSize
	}
	return &Git{cfg: cfg, opts: opts, store: filepath.Join(cfg.StoreRoot, StoreKey(cfg.URL))}
}

// DefaultStoreRoot is $XDG_CACHE_HOME/skillsync/git, shared by every
// workspace of the user on this machine.
func DefaultStoreRoot() string { return storeRoot(hostenv.Env{}) }

// storeRoot is DefaultStoreRoot in env.
func storeRoot(env hostenv.Env) string {
	dir, err := env.CacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "skillsync", "git")
}

var unsafeKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9._-]+`) })

// StoreKey names the store of a remote: readable host and path, then a
// hash of the URL without credentials, so two tokens for one remote share
// a store and no token ever appears in a path.
func StoreKey(remote string) string {
	clean := repository.StripCredentials(remote)
	sum := sha256.Sum256([]byte(clean))
	label := clean
	if u, err := url.Parse(clean); err == nil && u.Host != "" {
		label = u.Host + u.Path
	} else if i := strings.Index(clean, "@"); i >= 0 {
		label = clean[i+1:]
	}
	if i := strings.IndexAny(label, "?#"); i >= 0 {
		label = label[:i] // a token may be in the query or the fragment
	}
	label = strings.Trim(unsafeKey().ReplaceAllString(strings.ToLower(label), "-"), "-.")
	if len(label) > 60 {
		label = label[len(label)-60:]
	}
	return label + "-" + hex.EncodeToString(sum[:6])
}

// Source returns the source's name.
func (g *Git) Source() string { return g.cfg.Source }

// URL returns the remote with its credentials redacted.
func (g *Git) URL() string { return repository.RedactURL(g.cfg.URL) }

// StoreDir returns the directory of the bare store.
func (g *Git) StoreDir() string { return g.store }

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
			return nil, repository.ErrNotFetched
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
func (g *Git) Current(ctx context.Context) (repository.Revision, error) {
	c, err := g.commit(ctx)
	if err != nil {
		return "", err
	}
	return repository.Revision(c.Hash.String()), nil
}

// commit reads the commit the wanted ref last fetched.
func (g *Git) commit(ctx context.Context) (*object.Commit, error) {
	repo, h, err := g.head(ctx)
	if err != nil {
		return nil, err
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c, nil
}

// head opens the store and returns the commit this source's last Fetch
// settled on or, before one, the one the wanted ref last fetched, unread.
func (g *Git) head(ctx context.Context) (*git.Repository, plumbing.Hash, error) {
	repo, err := g.openStore(false, true)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	g.mu.Lock()
	settled := g.settled
	g.mu.Unlock()
	if !settled.IsZero() {
		// What this source's own fetch settled on, and said: a fetch of
		// the store since (a sync of another workspace that shares it)
		// may have moved the ref on, and the sync that records this
		// source's revision must read that revision's skills.
		return repo, settled, nil
	}
	ref, err := g.readLocalRef(ctx, repo)
	if errors.Is(err, plumbing.ErrReferenceNotFound) && fullSHA.MatchString(g.cfg.Ref) {
		// A commit pinned by its hash that another ref's fetch brought
		// (the lock's revision, fetched by a plain sync) is read as it
		// is: its hash names its content.
		h := plumbing.NewHash(g.cfg.Ref)
		if _, cerr := repo.CommitObject(h); cerr == nil {
			return repo, g.settleOn(h), nil
		}
	}
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, plumbing.ZeroHash, repository.ErrNotFetched
	}
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return repo, g.settleOn(ref.Hash()), nil
}

// settleOn makes h, read from the store's ref, the commit this source
// reads from now on unless it has one already: what Current said is what
// Skills reads, though another workspace's fetch moves the shared ref in
// between.
func (g *Git) settleOn(h plumbing.Hash) plumbing.Hash {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.settled.IsZero() {
		g.settled = h
	}
	return g.settled
}

// Skills reads the skills at the last fetched commit.
func (g *Git) Skills(ctx context.Context) ([]skill.Skill, []skill.Problem, error) {
	fsys, err := g.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	return repository.Discover(ctx, fsys, g.cfg.Source, repository.RepoName(g.cfg.URL), g.opts)
}

// FS returns the folder of skills at the last fetched commit. The commit
// and its trees are read from the packs the FS reads blobs from.
func (g *Git) FS(ctx context.Context) (*TreeFS, error) {
	repo, h, err := g.head(ctx)
	if err != nil {
		return nil, err
	}
	packs, err := g.openPacks()
	if err != nil {
		return nil, fmt.Errorf("read git store %s: %w", g.store, err)
	}
	c, err := packs.commit(repo.Storer, h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	tree, err := packs.tree(repo.Storer, c.TreeHash)
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", c.Hash, err)
	}
	root := NewTreeFS(tree, c.Committer.When)
	root.blobs = packs
	root.trees.packs, root.trees.s = packs, repo.Storer
	root.maxFileSize = g.opts.MaxFileSize
	dir := g.cfg.Path
	if dir == "" || dir == "." {
		return root, nil
	}
	sub, err := root.Sub(path.Clean(dir))
	if err != nil {
		return nil, pathError(root, path.Clean(dir), c.Hash.String()[:12], err)
	}
	return sub.(*TreeFS), nil
}

// pathError says that the configured path is no folder at commit, and
// which folders the nearest folder above it holds, to pick path: from.
// The names come from the repository: the caller's output escapes them.
func pathError(root fs.FS, dir, commit string, err error) error {
	parent := path.Dir(dir)
	for parent != "." && parent != "/" {
		if info, err := fs.Stat(root, parent); err == nil && info.IsDir() {
			break
		}
		parent = path.Dir(parent)
	}
	const most = 8
	var folders []string
	n := 0
	entries, _ := fs.ReadDir(root, parent)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if n++; n <= most {
			folders = append(folders, e.Name()+"/")
		}
	}
	if n > most {
		folders = append(folders, fmt.Sprintf("and %d more", n-most))
	}
	where := "the repository's top level"
	if parent != "." {
		where = parent + "/"
	}
	holds := "holds no folder"
	if n > 0 {
		holds = "holds " + strings.Join(folders, ", ")
	}
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err // the path is said already
	}
	why := "cannot be read (" + cause.Error() + ")"
	if info, serr := fs.Stat(root, dir); errors.Is(err, fs.ErrNotExist) {
		why = "no such folder"
	} else if serr == nil && !info.IsDir() {
		why = "not a folder"
	}
	return &badPath{fmt.Sprintf("path: %s: %s at commit %s; %s %s (path: names the folder that holds the skills)",
		dir, why, commit, where, holds), err}
}

// badPath is pathError's error: its message says it all, and it wraps
// what the tree said.
type badPath struct {
	msg string
	err error
}

func (e *badPath) Error() string { return e.msg }
func (e *badPath) Unwrap() error { return e.err }

// openPacks returns the store's packs, their indexes read once for as
// long as the store holds the same packs (a fetch adds one).
func (g *Git) openPacks() (*packedObjects, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.packs != nil {
		if same, err := g.packs.current(); err != nil || same {
			return g.packs, err
		}
		g.packs.Close() // an FS still reading them opens them again
	}
	p, err := openPackedObjects(g.store)
	if err != nil {
		return nil, err
	}
	p.spools = &g.spools
	p.maxBase = 32 * g.opts.MaxFileSize
	g.packs = p
	return p, nil
}

// Close closes the pack files the FS it returned hold open, and drops the
// objects the last download spooled. An FS read after Close opens the
// packs again.
func (g *Git) Close() error {
	g.spools.Close()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.packs == nil {
		return nil
	}
	return g.packs.Close()
}

var (
	_ io.Closer             = (*Git)(nil)
	_ repository.Repository = (*Git)(nil)
	_ repository.Fetcher    = (*Git)(nil)
	_ repository.Currenter  = (*Git)(nil)
	_ repository.Upstreamer = (*Git)(nil)
)

// readLocalRef reads the store's ref of this source under the store's
// shared lock, which keeps the read from meeting a ref half rewritten by
// a fetch in another process. The lock goes however the read ends: a
// panic recovered above (the daemon goes on) would otherwise leave it to
// the collector, and every fetch of the store waiting.
func (g *Git) readLocalRef(ctx context.Context, repo *git.Repository) (*plumbing.Reference, error) {
	lock, err := flock.AcquireShared(ctx, g.store+".lock", g.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	return repo.Reference(g.localRef(), true)
}
