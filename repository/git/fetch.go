package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/repository"
)

// Sync fetches and returns the revision; see Fetch.
func (g *Git) Sync(ctx context.Context) (repository.Revision, error) {
	r, err := g.Fetch(ctx)
	return r.Revision, err
}

// Fetch resolves the wanted ref on the remote and brings its commit into
// the store. It lists the remote's refs first, and when that commit is
// already in the store it fetches nothing. A failed fetch leaves the
// previous revision in place.
//
// Every connection is bound to ctx and to the source's timeout, and is
// closed when the fetch ends. A store left in a bad state (a ref that is
// empty or names a missing commit, unreadable objects) is removed and
// fetched again, with a warning in the result; temporary files of an
// interrupted fetch are removed.
func (g *Git) Fetch(ctx context.Context) (repository.FetchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	res, err := g.fetch(ctx)
	if err != nil {
		return res, g.explain(ctx, "fetch", err)
	}
	g.mu.Lock()
	g.settled = plumbing.NewHash(string(res.Revision))
	g.mu.Unlock()
	return res, nil
}

// Upstream returns the commit the wanted ref names on the remote now,
// annotated tags peeled, from one listing of the remote's refs: nothing
// is downloaded and the store is not touched, so it is what a check for
// updates needs. A ref that is a full commit hash is its own upstream and
// asks no remote.
func (g *Git) Upstream(ctx context.Context) (repository.Revision, error) {
	if fullSHA.MatchString(g.cfg.Ref) {
		return repository.Revision(g.cfg.Ref), nil
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	rev, err := g.upstream(ctx)
	if err != nil {
		err = g.explain(ctx, "list", err)
	}
	return rev, err
}

func (g *Git) upstream(ctx context.Context) (repository.Revision, error) {
	remoteURL, auth, err := g.auth()
	if err != nil {
		return "", err
	}
	relay, err := g.route(ctx, remoteURL)
	if err != nil {
		return "", err
	}
	defer relay.Close()
	refs, _, err := g.login(ctx, remoteURL, auth, relay)
	if err != nil {
		return "", err
	}
	want, err := g.want(refs)
	if err != nil {
		return "", err
	}
	return repository.Revision(want.commit.String()), nil
}

// lockStore takes the store's lock for a writer of the store (a fetch, a
// publish), making the folder of the stores first.
func (g *Git) lockStore(ctx context.Context) (*flock.Lock, error) {
	if err := os.MkdirAll(g.cfg.StoreRoot, 0o755); err != nil {
		return nil, err
	}
	return flock.Acquire(ctx, g.store+".lock", g.cfg.Timeout)
}

func (g *Git) fetch(ctx context.Context) (repository.FetchResult, error) {
	lock, err := g.lockStore(ctx)
	if err != nil {
		return repository.FetchResult{}, err
	}
	defer lock.Close()
	// What an earlier download spooled was for the sync that followed it;
	// dropped first, it holds no file in a store about to be checked.
	g.spools.Close()
	var res repository.FetchResult
	repo, quick, warning, err := g.prepareStore()
	if err != nil {
		return res, err
	}
	defer quick.Close()
	// has asks the packs' indexes in place first: a no-op sync reads no
	// index whole.
	has := func(h plumbing.Hash) bool { return quick.hasCommit(h) || hasCommit(repo, h) }
	if warning != "" {
		res.Warnings = append(res.Warnings, warning)
	}
	local := g.localRef()
	before, _ := repo.Reference(local, true)
	if fullSHA.MatchString(g.cfg.Ref) && has(plumbing.NewHash(g.cfg.Ref)) {
		// A commit never changes: once it is here, the remote is not asked.
		commit := plumbing.NewHash(g.cfg.Ref)
		res.Revision, res.Updated = repository.Revision(commit.String()), before == nil
		return res, g.settle(repo, commit, local, before, has)
	}
	remoteURL, auth, err := g.auth()
	if err != nil {
		return res, err
	}
	relay, err := g.route(ctx, remoteURL)
	if err != nil {
		return res, err
	}
	defer relay.Close()
	refs, auth, err := g.login(ctx, remoteURL, auth, relay)
	if err != nil {
		return res, err
	}
	want, err := g.want(refs)
	if err != nil {
		return res, err
	}
	commit := want.commit
	if commit.IsZero() || !has(commit) {
		// The packs quick reads are not all the store will hold, and are
		// not held open while the store changes.
		quick.Close()
		d := download{g: g, repo: repo, url: remoteURL, auth: auth, via: relay.Proxy()}
		if commit, err = d.get(ctx, want); err != nil {
			return res, err
		}
	}
	if err := g.settle(repo, commit, local, before, has); err != nil {
		return res, err
	}
	res.Revision, res.Updated = repository.Revision(commit.String()), before == nil || before.Hash() != commit
	return res, nil
}

// route returns the relay that binds every connection of a fetch from
// remoteURL to ctx, to be closed when the fetch is done, or nil when none
// is needed (a nil relay's Proxy routes nowhere and its Close does
// nothing). go-git's HTTP and file transports honour the context; its SSH
// transport does not, so SSH goes through an sshRelay.
func (g *Git) route(ctx context.Context, remoteURL string) (*sshRelay, error) {
	ep, err := transport.NewEndpoint(remoteURL)
	if err != nil || ep.Protocol != "ssh" {
		return nil, nil
	}
	return startSSHRelay(ctx)
}

// prepareStore opens the store for a fetch. Temporary files of a fetch
// that was interrupted are removed first. A store in a bad state is
// removed and created afresh, and the warning says why: a fetch that
// failed half way (a full disk) could leave an empty ref file, after which
// go-git refused every fetch.
//
// It returns too the store's packs opened for quick questions (see
// quickObjects), to be closed by the caller.
func (g *Git) prepareStore() (*git.Repository, *quickObjects, string, error) {
	removeTemporaries(g.store)
	repo, err := g.openStore(true, false)
	quick := openQuickObjects(g.store)
	if err == nil {
		err = checkStore(repo, quick)
	}
	if err == nil {
		return repo, quick, "", nil
	}
	quick.Close()
	warning := fmt.Sprintf("the git store %s was damaged (%v): it was removed and is fetched again", g.store, err)
	if err := os.RemoveAll(g.store); err != nil {
		return nil, nil, "", fmt.Errorf("remove the damaged git store %s: %w", g.store, err)
	}
	repo, err = g.openStore(true, false)
	return repo, &quickObjects{}, warning, err
}

// removeTemporaries removes what an interrupted fetch leaves: packs and
// indexes being written, bases spooled while indexing, loose objects
// being written, the scratch ref. Fetches hold the store's lock; a reader
// spooling a base at the same time keeps its open file.
func removeTemporaries(store string) {
	os.Remove(filepath.Join(store, filepath.FromSlash(string(scratchRef))))
	for _, pattern := range []string{"objects/pack/tmp_*", "objects/tmp_obj_*"} {
		names, _ := filepath.Glob(filepath.Join(store, filepath.FromSlash(pattern)))
		for _, name := range names {
			os.Remove(name)
		}
	}
}

// checkStore reports what makes the store unusable: a ref that cannot be
// read, one that names a commit the store does not hold whole, a shallow
// file that cannot be read.
func checkStore(repo *git.Repository, quick *quickObjects) error {
	if _, err := repo.Storer.Shallow(); err != nil {
		return fmt.Errorf("read shallow commits: %w", err)
	}
	refs, err := repo.References()
	if err != nil {
		return fmt.Errorf("read refs: %w", err)
	}
	defer refs.Close()
	return refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() != plumbing.HashReference || !strings.HasPrefix(string(r.Name()), "refs/") {
			return nil
		}
		if commit, ok := quick.peel(r.Hash()); ok && quick.hasCommit(commit) {
			return nil
		}
		commit, err := peel(repo, r.Hash())
		if err != nil || !hasCommit(repo, commit) {
			return fmt.Errorf("%s names %s, which is missing or unreadable", r.Name(), r.Hash())
		}
		return nil
	})
}

// wanted is a resolved ref: what to ask the remote for, and the commit it
// points to when the listing says so.
type wanted struct {
	remoteRef plumbing.ReferenceName // "" for a bare commit SHA
	commit    plumbing.Hash
}

// fullSHA matches a full commit hash, ^[0-9a-f]{40}$, checked by hand: a
// package-level regexp cost every start of the CLI its compilation.
var fullSHA = hexString{40}

type hexString struct{ n int }

func (h hexString) MatchString(s string) bool {
	if len(s) != h.n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

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

// scratchRef receives what a fetch brings; a source's own ref is moved
// only once its commit is in the store, so a fetch that brings less than
// it should leaves the source at its last good commit.
const scratchRef = plumbing.ReferenceName("refs/skillsync/fetching")

// infiniteDepth is git's "deepen" to the whole history (INFINITE_DEPTH).
const infiniteDepth = 0x7fffffff

// download brings one wanted commit into a store.
type download struct {
	g    *Git
	repo *git.Repository
	url  string
	auth authMethod
	via  transport.ProxyOptions
}

// get fetches the wanted commit into the store and returns it. Pull is
// never used: a shallow pull in go-git v5 fails with "object not found"
// after two upstream commits, while a forced fetch into our own ref does
// not.
func (d download) get(ctx context.Context, want wanted) (plumbing.Hash, error) {
	src := string(want.remoteRef)
	if src == "" {
		src = want.commit.String()
	}
	st := d.repo.Storer
	_ = st.RemoveReference(scratchRef)
	defer st.RemoveReference(scratchRef)
	shallow := isShallow(d.repo)
	depth := d.g.cfg.Depth
	if hasRevisions(d.repo) {
		// The store already holds a commit of this remote. A depth-limited
		// fetch would make the server send the new commit's whole tree
		// again; without one, the server stops at the commits the store
		// has and sends only what is new (380 KiB instead of 32 MiB for a
		// 1% change of the medium benchmark corpus).
		depth = 0
	}
	spec := config.RefSpec("+" + src + ":" + string(scratchRef))
	err := d.fetch(ctx, depth, spec)
	if errors.Is(err, git.ErrExactSHA1NotSupported) {
		return d.search(ctx, want.commit, shallow)
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch %s: %w", src, err)
	}
	commit, err := d.arrived(want)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !hasCommit(d.repo, commit) && shallow && depth == 0 {
		// Behind the store's shallow boundary: not told where the store's
		// history ends, the server took the store's commits for complete
		// history and sent nothing older (a force-push back to a parent,
		// an older commit locked by another workspace). Say where it ends.
		deepen := d.g.cfg.Depth
		if deepen <= 0 {
			deepen = infiniteDepth
		}
		if err := d.fetch(ctx, deepen, spec); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("fetch %s: %w", src, err)
		}
		if commit, err = d.arrived(want); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if !hasCommit(d.repo, commit) {
		return plumbing.ZeroHash, fmt.Errorf("commit %s is not in the store after the fetch", commit)
	}
	return commit, nil
}

// search is for a server that will not hand out a commit by its hash: it
// fetches every branch and tag, with their whole history, and looks for
// the commit there.
func (d download) search(ctx context.Context, commit plumbing.Hash, shallow bool) (plumbing.Hash, error) {
	depth := 0
	if shallow {
		depth = infiniteDepth
	}
	err := d.fetch(ctx, depth, "+refs/heads/*:refs/skillsync/all/heads/*", "+refs/tags/*:refs/skillsync/all/tags/*")
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch every branch and tag: %w", err)
	}
	if !hasCommit(d.repo, commit) {
		return plumbing.ZeroHash, fmt.Errorf("commit %s is on no branch or tag of the remote", commit)
	}
	return commit, nil
}

// arrived returns the commit the fetch brought for want: where the
// scratch ref points (the remote's ref may have moved since the listing),
// or the wanted hash.
func (d download) arrived(want wanted) (plumbing.Hash, error) {
	if want.remoteRef == "" {
		return want.commit, nil
	}
	ref, err := d.repo.Storer.Reference(scratchRef)
	if err != nil {
		return want.commit, nil
	}
	return peel(d.repo, ref.Hash())
}

// fetch runs one fetch of specs, retrying transient failures. The pack it
// receives goes through a packReceiver, which bounds its size and the
// memory its indexing takes.
func (d download) fetch(ctx context.Context, depth int, specs ...config.RefSpec) error {
	opts := &git.FetchOptions{
		RefSpecs:     specs,
		Depth:        depth,
		Auth:         d.auth,
		Progress:     d.g.cfg.Progress,
		Tags:         git.NoTags,
		Force:        true,
		ProxyOptions: d.via,
	}
	err := retry(ctx, func() error { return d.fetchOnce(ctx, opts, nil) })
	if err == nil || opts.Progress != nil || ctx.Err() != nil || isAuthError(err) ||
		errors.Is(err, ErrSourceTooLarge) || errors.Is(err, transport.ErrRepositoryNotFound) {
		return err
	}
	// go-git's own error ("checksum does not match") hides what the
	// remote said went wrong, on the progress channel that a fetch
	// without progress turns off: ask once more, listening, and add the
	// remote's words. (Listening always slows a large fetch down.)
	said := &remoteTail{}
	if again := d.fetchOnce(ctx, opts, said); again == nil {
		return nil
	}
	if msg := said.message(); msg != "" {
		return fmt.Errorf("%w (the remote said: %s)", err, msg)
	}
	return err
}

// fetchOnce runs one fetch; said, when not nil, hears the remote's
// progress channel.
func (d download) fetchOnce(ctx context.Context, opts *git.FetchOptions, said *remoteTail) (err error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var received []*packReceiver
	st := &fetchStorer{Storer: d.repo.Storer, receive: func() (*packReceiver, error) {
		p, err := newPackReceiver(ctx, stop, d.g.store, d.g.cfg.MaxFetchSize)
		if err == nil {
			received = append(received, p)
		}
		return p, err
	}}
	remote := git.NewRemote(st, &config.RemoteConfig{Name: "origin", URLs: []string{d.url}})
	o := *opts
	if said != nil {
		o.Progress = said
	}
	err = ignoreUpToDate(remote.FetchContext(ctx, &o))
	for _, p := range received {
		if perr := p.Err(); perr != nil {
			// The transfer was stopped for this reason; go-git may only
			// say it was cancelled.
			err = perr
		}
	}
	for _, p := range received {
		if p.spool == nil {
			continue
		}
		if err == nil {
			// The sync that follows reads these objects from the spool.
			d.g.spools.add(p.spool)
		} else {
			p.spool.close()
		}
	}
	if st, ok := d.repo.Storer.(interface{ Reindex() }); ok {
		// The receiver wrote the pack behind go-git's back.
		st.Reindex()
	}
	return err
}

// isShallow reports whether the store holds commits without their parents.
func isShallow(repo *git.Repository) bool {
	s, err := repo.Storer.Shallow()
	return err == nil && len(s) > 0
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
func (g *Git) settle(repo *git.Repository, commit plumbing.Hash, local plumbing.ReferenceName, before *plumbing.Reference, has func(plumbing.Hash) bool) error {
	if !has(commit) {
		return fmt.Errorf("commit %s is not in the store after the fetch", commit)
	}
	if before != nil && before.Name() == local && before.Hash() == commit {
		// Already recorded: a no-op sync writes nothing to the store.
		return nil
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

// remoteTail keeps the last lines of what the remote wrote on its progress
// channel that are not progress counters: the remote's own error text.
type remoteTail struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
}

// maxRemoteLines and maxRemoteLine bound what a remote can make an error
// say.
const (
	maxRemoteLines = 3
	maxRemoteLine  = 300
)

func (r *remoteTail) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range p {
		if b != '\n' && b != '\r' {
			if len(r.partial) < maxRemoteLine {
				r.partial = append(r.partial, b)
			}
			continue
		}
		r.line()
	}
	return len(p), nil
}

// line ends the partial line, keeping it unless it is progress.
func (r *remoteTail) line() {
	l := strings.TrimSpace(strings.ToValidUTF8(string(r.partial), "?"))
	r.partial = r.partial[:0]
	if l == "" || progressLine().MatchString(l) {
		return
	}
	l = strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return '?'
		}
		return c
	}, l)
	r.lines = append(r.lines, l)
	if len(r.lines) > maxRemoteLines {
		r.lines = r.lines[len(r.lines)-maxRemoteLines:]
	}
}

func (r *remoteTail) message() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.partial) > 0 {
		r.line()
	}
	return strings.Join(r.lines, "; ")
}

// progressLine is one of git's progress counters ("Counting objects:
// 42% (5/12)", "Total 12 (delta 0), reused 0 (delta 0), pack-reused 0").
var progressLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(remote: )?([A-Z][a-z]+( [a-z]+)*: +\d+(% \(\d+/\d+\))?|Total \d+ \(delta \d+\))`)
})
