package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Publish commits the skill on top of req.Base and pushes the commit to
// the remote with the source's own auth: to a new branch (ErrBranchExists
// when the remote has it), or with req.Direct to the tracked branch, only
// as a fast-forward of req.Base (ErrNonFastForward otherwise; the server
// also checks the branch still points where it was listed). The commit is
// built in the source's store under its lock, from the store's objects,
// without a checkout. It is bounded by the source's timeout, and its
// errors name the auth setting to check and hold no secret.
func (g *Git) Publish(ctx context.Context, req repository.PublishRequest) (repository.Published, error) {
	if !skill.ValidName(req.Name) {
		return repository.Published{}, fmt.Errorf("publish %q: the name is not one safe path component", req.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	res, err := g.publish(ctx, req)
	if err != nil {
		err = g.explain(ctx, "publish to", err)
	}
	return res, err
}

func (g *Git) publish(ctx context.Context, req repository.PublishRequest) (repository.Published, error) {
	lock, err := g.lockStore(ctx)
	if err != nil {
		return repository.Published{}, err
	}
	defer lock.Close()
	repo, err := g.openStore(true, false)
	if err != nil {
		return repository.Published{}, err
	}
	remoteURL, auth, err := g.auth()
	if err != nil {
		return repository.Published{}, err
	}
	remote := git.NewRemote(repo.Storer, &config.RemoteConfig{Name: "origin", URLs: []string{remoteURL}})
	relay, err := g.route(ctx, remoteURL)
	if err != nil {
		return repository.Published{}, err
	}
	defer relay.Close()
	refs, auth, err := g.login(ctx, remoteURL, auth, relay)
	if err != nil {
		return repository.Published{}, err
	}
	want, err := g.want(refs)
	if err != nil {
		return repository.Published{}, err
	}
	tracked := want.remoteRef
	if !tracked.IsBranch() {
		tracked = ""
	}
	out := repository.Published{Direct: req.Direct && req.Branch == ""}
	target := req.Branch
	switch {
	case out.Direct && tracked == "":
		return out, fmt.Errorf("publish: direct pushes to the tracked branch, and ref %q is not a branch; set ref: to a branch or publish to a review branch", g.cfg.Ref)
	case out.Direct:
		target = tracked.Short()
	case target == "":
		target = "skillsync/" + req.Name
	}
	targetRef := plumbing.NewBranchReferenceName(target)
	if err := targetRef.Validate(); err != nil {
		return out, fmt.Errorf("branch %q: %w", target, err)
	}
	out.Branch = target
	if !out.Direct {
		for _, r := range refs {
			if r.Name() == targetRef {
				return out, fmt.Errorf("branch %s: %w; merge or delete it on the remote, or publish to another branch", target, repository.ErrBranchExists)
			}
		}
	}

	// The tip must be in the store: the push leaves out what the remote
	// has, which it finds by walking from the remote's refs here.
	tip := want.commit
	if !hasCommit(repo, tip) {
		if err := g.fetchForPublish(ctx, repo, remote, auth, want); err != nil {
			return out, err
		}
		if tip, err = g.resolveFetched(repo, want); err != nil {
			return out, err
		}
	}
	base := tip
	if req.Base != "" {
		base = plumbing.NewHash(string(req.Base))
		if !hasCommit(repo, base) {
			if out.Direct {
				return out, fmt.Errorf("the workspace's revision %s is not on %s any more (the remote was rewritten): %w", short(base), target, repository.ErrNonFastForward)
			}
			base = tip
		}
	}
	if out.Direct && base != tip {
		return out, fmt.Errorf("%s is at %s, not at %s where this workspace has it: %w", target, short(tip), short(base), repository.ErrNonFastForward)
	}
	out.Base = repository.Revision(base.String())

	commitOf := g.commitSkill
	switch {
	case len(req.Archive) > 0:
		commitOf = g.commitArchive
	case req.Edit != nil:
		commitOf = g.commitEdit
	}
	commit, dir, err := commitOf(ctx, repo, base, req)
	if err != nil {
		return out, err
	}
	out.Path, out.Commit = dir, repository.Revision(commit.String())

	opts := &git.PushOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{config.RefSpec(commit.String() + ":" + string(targetRef))},
		Auth:       auth,
	}
	if out.Direct {
		// The server takes the update only while the branch is where it
		// was listed: a push that raced ours is never overwritten.
		opts.RequireRemoteRefs = []config.RefSpec{config.RefSpec(tip.String() + ":" + string(targetRef))}
	}
	if err := remote.PushContext(ctx, opts); err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "non-fast-forward"), strings.Contains(msg, "remote ref") && strings.Contains(msg, "required to be"):
			return out, fmt.Errorf("push to %s: %w", target, repository.ErrNonFastForward)
		case errors.Is(err, git.NoErrAlreadyUpToDate):
			return out, nil
		}
		return out, fmt.Errorf("push to %s: %w", target, err)
	}
	return out, nil
}

// fetchForPublish brings the wanted ref's commit into the store under a
// ref of publishing's own, leaving the source's synced revision alone.
func (g *Git) fetchForPublish(ctx context.Context, repo *git.Repository, remote *git.Remote, auth authMethod, want wanted) error {
	src := string(want.remoteRef)
	if src == "" {
		src = want.commit.String()
	}
	depth := g.cfg.Depth
	if hasRevisions(repo) {
		depth = 0 // send only what is new, as Fetch does
	}
	opts := &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec("+" + src + ":" + string(publishBaseRef))},
		Depth:    depth,
		Auth:     auth,
		Tags:     git.NoTags,
		Force:    true,
	}
	err := retry(ctx, func() error { return ignoreUpToDate(remote.FetchContext(ctx, opts)) })
	if err != nil {
		return fmt.Errorf("fetch %s: %w", src, err)
	}
	return nil
}

// publishBaseRef is where publishing keeps the tip it built on.
const publishBaseRef = plumbing.ReferenceName("refs/skillsync/publish/base")

func (g *Git) resolveFetched(repo *git.Repository, want wanted) (plumbing.Hash, error) {
	tip := want.commit
	if want.remoteRef != "" {
		ref, err := repo.Reference(publishBaseRef, true)
		if err != nil {
			return tip, fmt.Errorf("read fetched tip: %w", err)
		}
		if tip, err = peel(repo, ref.Hash()); err != nil {
			return tip, err
		}
	}
	if !hasCommit(repo, tip) {
		return tip, fmt.Errorf("commit %s is not in the store after the fetch", tip)
	}
	return tip, nil
}

func short(h plumbing.Hash) string { return h.String()[:12] }

// commitSkill writes the skill's blobs and trees and a commit on base, and
// returns the commit and the skill's folder in the repository.
func (g *Git) commitSkill(ctx context.Context, repo *git.Repository, base plumbing.Hash, req repository.PublishRequest) (plumbing.Hash, string, error) {
	root, when, err := baseTree(repo, base)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	dir, found, err := g.skillDir(ctx, root, when, req.Name)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	if _, err := root.FindEntry(dir); err == nil && !found {
		// A folder that holds no skill of the name: its files are not the
		// skill's to replace.
		return plumbing.ZeroHash, "", fmt.Errorf("%s at %s is a folder that holds no skill %s, and publishing would replace its files: move that folder in the repository, or give the skill another name", dir, short(base), req.Name)
	}
	w := &treeWriter{repo: repo}
	keep, err := links(root, dir)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	skillTree, err := w.skillTree(ctx, req.Files, req.List, keep)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	return w.commitFolder(root, base, dir, skillTree, req)
}

// commitFolder commits, on base whose tree is root, the tree with the
// folder dir made folder; a tree that does not change is
// ErrNothingToPublish.
func (w *treeWriter) commitFolder(root *object.Tree, base plumbing.Hash, dir string, folder plumbing.Hash, req repository.PublishRequest) (plumbing.Hash, string, error) {
	newRoot, err := w.splice(root, strings.Split(dir, "/"), folder)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	if newRoot == root.Hash {
		return plumbing.ZeroHash, dir, fmt.Errorf("%s at %s: %w", dir, short(base), repository.ErrNothingToPublish)
	}
	h, err := w.commit(base, newRoot, req)
	return h, dir, err
}

// baseTree returns the tree of the commit base and its commit time.
func baseTree(repo *git.Repository, base plumbing.Hash) (*object.Tree, time.Time, error) {
	c, err := repo.CommitObject(base)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read commit %s: %w", short(base), err)
	}
	root, err := c.Tree()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read tree of %s: %w", short(base), err)
	}
	return root, c.Committer.When, nil
}

// commit stores the commit of tree on base, by req's author, with its
// message.
func (w *treeWriter) commit(base, tree plumbing.Hash, req repository.PublishRequest) (plumbing.Hash, error) {
	sig := object.Signature{Name: req.Author, Email: req.Email, When: req.When}
	c := &object.Commit{Author: sig, Committer: sig, Message: req.Message, TreeHash: tree, ParentHashes: []plumbing.Hash{base}}
	obj := w.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := w.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store commit: %w", err)
	}
	return h, nil
}

// skillDir is where the skill goes in the tree: the folder of the skill
// of that name under the source's path when the tree has one (found),
// else <path>/<name>. The path is found as FS finds it: path:, else
// skills/ when the tree has it, else the root.
func (g *Git) skillDir(ctx context.Context, root *object.Tree, when time.Time, name string) (string, bool, error) {
	tfs := NewTreeFS(root, when)
	dir := strings.Trim(path.Clean("/"+g.cfg.Path), "/")
	if dir == "" {
		if info, err := tfs.Stat("skills"); err == nil && info.IsDir() {
			dir = "skills"
		}
	}
	var sub fs.FS = tfs
	if dir != "" {
		s, err := tfs.Sub(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// The folder is made by the commit.
			return path.Join(dir, name), false, nil
		case err != nil:
			return "", false, fmt.Errorf("path %s: %w", dir, err)
		}
		sub = s
	}
	scanned, _, err := repository.Scan(ctx, sub, g.cfg.Source, dir, repository.Options{})
	if err != nil {
		return "", false, err
	}
	key := strings.ToLower(skill.NormalizeName(name))
	for _, f := range scanned {
		if f.Skill.Path != "." && strings.ToLower(skill.NormalizeName(f.Skill.Name)) == key {
			return strings.TrimPrefix(path.Join(dir, f.Skill.Path), "/"), true, nil
		}
	}
	return strings.TrimPrefix(path.Join(dir, name), "/"), false, nil
}

// treeWriter writes blobs and trees into the store.
type treeWriter struct {
	repo *git.Repository
}

func (w *treeWriter) store(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h, err := w.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store object: %w", err)
	}
	return h, nil
}

// dirNode is a folder of the skill being committed.
type dirNode struct {
	files map[string]object.TreeEntry
	dirs  map[string]*dirNode
}

func newDirNode() *dirNode {
	return &dirNode{files: map[string]object.TreeEntry{}, dirs: map[string]*dirNode{}}
}

// links returns the symbolic links of the folder dir of root, by their
// paths in it; none when root has no such folder.
func links(root *object.Tree, dir string) (map[string]object.TreeEntry, error) {
	entry, err := root.FindEntry(dir)
	if err != nil || entry.Mode != filemode.Dir {
		return nil, nil
	}
	t, err := root.Tree(dir)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", dir, err)
	}
	out := map[string]object.TreeEntry{}
	// The walker reads trees only, never a blob.
	walk := object.NewTreeWalker(t, true, nil)
	defer walk.Close()
	for {
		name, e, err := walk.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read tree %s: %w", dir, err)
		}
		if e.Mode == filemode.Symlink {
			out[name] = e
		}
	}
}

// skillTree writes each file of list as a blob and returns the tree of
// the skill. The links of keep (by path) stay where the list has nothing
// in their place: a draft is regular files, and holds no link to replace
// or remove one that a sync passed over.
func (w *treeWriter) skillTree(ctx context.Context, files fs.FS, list []skill.File, keep map[string]object.TreeEntry) (plumbing.Hash, error) {
	top := newDirNode()
	for _, f := range list {
		if err := ctx.Err(); err != nil {
			return plumbing.ZeroHash, err
		}
		if !fs.ValidPath(f.Path) || f.Path == "." {
			return plumbing.ZeroHash, fmt.Errorf("file %q: not a valid path", f.Path)
		}
		h, err := w.blob(files, f)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		parts := strings.Split(f.Path, "/")
		n := top
		for _, p := range parts[:len(parts)-1] {
			if n.dirs[p] == nil {
				n.dirs[p] = newDirNode()
			}
			n = n.dirs[p]
		}
		mode := filemode.Regular
		if f.Mode&0o111 != 0 {
			mode = filemode.Executable
		}
		n.files[parts[len(parts)-1]] = object.TreeEntry{Name: parts[len(parts)-1], Mode: mode, Hash: h}
	}
	for p, e := range keep {
		top.keep(strings.Split(p, "/"), e)
	}
	return w.writeDir(top)
}

// keep puts the entry e at the path parts where nothing of the node
// stands in its way.
func (n *dirNode) keep(parts []string, e object.TreeEntry) {
	for _, p := range parts[:len(parts)-1] {
		if _, file := n.files[p]; file {
			return
		}
		if n.dirs[p] == nil {
			n.dirs[p] = newDirNode()
		}
		n = n.dirs[p]
	}
	last := parts[len(parts)-1]
	if _, file := n.files[last]; file || n.dirs[last] != nil {
		return
	}
	n.files[last] = e
}

func (w *treeWriter) blob(files fs.FS, f skill.File) (plumbing.Hash, error) {
	r, err := files.Open(f.Path)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", f.Path, err)
	}
	defer r.Close()
	obj := w.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(f.Size)
	ow, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	n, err := io.Copy(ow, io.LimitReader(r, f.Size+1))
	if cerr := ow.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if n != f.Size {
		return plumbing.ZeroHash, fmt.Errorf("read %s: the file changed while it was read", f.Path)
	}
	return w.store(obj)
}

func (w *treeWriter) writeDir(n *dirNode) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	for name, sub := range n.dirs {
		if _, clash := n.files[name]; clash {
			return plumbing.ZeroHash, fmt.Errorf("%s is both a file and a folder", name)
		}
		h, err := w.writeDir(sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	for _, e := range n.files {
		entries = append(entries, e)
	}
	return w.writeTree(entries)
}

// writeTree stores a tree of entries in git's order: by name, a folder
// sorting as if its name ended in "/".
func (w *treeWriter) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	t := &object.Tree{Entries: entries}
	obj := w.repo.Storer.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.store(obj)
}

// splice returns the hash of tree (nil for none) with the folder at parts
// replaced by leaf, every tree on the way written anew.
func (w *treeWriter) splice(tree *object.Tree, parts []string, leaf plumbing.Hash) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	var child *object.Tree
	if tree != nil {
		for _, e := range tree.Entries {
			if e.Name != parts[0] {
				entries = append(entries, e)
				continue
			}
			if len(parts) > 1 {
				if e.Mode != filemode.Dir {
					return plumbing.ZeroHash, fmt.Errorf("%s in the repository is not a folder", parts[0])
				}
				t, err := w.repo.TreeObject(e.Hash)
				if err != nil {
					return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", parts[0], err)
				}
				child = t
			}
		}
	}
	h := leaf
	if len(parts) > 1 {
		var err error
		if h, err = w.splice(child, parts[1:], leaf); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	entries = append(entries, object.TreeEntry{Name: parts[0], Mode: filemode.Dir, Hash: h})
	return w.writeTree(entries)
}

var _ repository.Publisher = (*Git)(nil)
