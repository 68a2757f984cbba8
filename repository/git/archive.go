package git

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/skillsync/skillsync/repository"
)

// commitArchive writes a commit on base that moves each skill of
// req.Archive into .archive/<its folder>, and returns it with the folders
// moved, comma-separated. A name the tree does not have is an error: the
// plan was made on another revision.
func (g *Git) commitArchive(ctx context.Context, repo *git.Repository, base plumbing.Hash, req repository.PublishRequest) (plumbing.Hash, string, error) {
	root, when, err := baseTree(repo, base)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	w := &treeWriter{repo: repo}
	var moved []string
	tree := root
	for _, name := range req.Archive {
		dir, _, err := g.skillDir(ctx, tree, when, name)
		if err != nil {
			return plumbing.ZeroHash, "", err
		}
		entry, err := tree.FindEntry(dir)
		if err != nil || entry.Mode != filemode.Dir {
			return plumbing.ZeroHash, "", fmt.Errorf("archive %s: no folder %s at %s", name, dir, short(base))
		}
		dst := path.Join(repository.ArchiveDir, dir)
		if _, err := tree.FindEntry(dst); err == nil {
			return plumbing.ZeroHash, "", fmt.Errorf("archive %s: %s already exists at %s", name, dst, short(base))
		}
		h, err := w.splice(tree, strings.Split(dst, "/"), entry.Hash)
		if err != nil {
			return plumbing.ZeroHash, "", err
		}
		if tree, err = repo.TreeObject(h); err != nil {
			return plumbing.ZeroHash, "", err
		}
		if h, err = w.cut(tree, strings.Split(dir, "/")); err != nil {
			return plumbing.ZeroHash, "", err
		}
		if tree, err = repo.TreeObject(h); err != nil {
			return plumbing.ZeroHash, "", err
		}
		moved = append(moved, dir)
	}
	if tree.Hash == root.Hash {
		return plumbing.ZeroHash, "", fmt.Errorf("nothing to archive at %s: %w", short(base), repository.ErrNothingToPublish)
	}
	h, err := w.commit(base, tree.Hash, req)
	return h, strings.Join(moved, ","), err
}

// cut returns the hash of tree with the entry at parts removed, every
// tree on the way written anew; a folder left empty is removed too.
func (w *treeWriter) cut(tree *object.Tree, parts []string) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	for _, e := range tree.Entries {
		if e.Name != parts[0] {
			entries = append(entries, e)
			continue
		}
		if len(parts) == 1 {
			continue
		}
		if e.Mode != filemode.Dir {
			return plumbing.ZeroHash, fmt.Errorf("%s in the repository is not a folder", parts[0])
		}
		child, err := w.repo.TreeObject(e.Hash)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", parts[0], err)
		}
		h, err := w.cut(child, parts[1:])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if sub, err := w.repo.TreeObject(h); err == nil && len(sub.Entries) == 0 {
			continue
		}
		entries = append(entries, object.TreeEntry{Name: e.Name, Mode: filemode.Dir, Hash: h})
	}
	return w.writeTree(entries)
}
