package git

import (
	"context"
	"fmt"
	"io"
	"slices"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/skillsync/skillsync/repository"
)

// maxEditedFile bounds the SKILL.md an edit reads into memory.
const maxEditedFile = 1 << 20

// commitEdit writes a commit on base that changes only the SKILL.md of
// the skill req.Name, to what req.Edit makes of it. The rest of the
// skill's folder (links, modes, files a sync passed over) is kept entry
// for entry, and what the edit starts from is the base's, never a copy
// that may be older.
func (g *Git) commitEdit(ctx context.Context, repo *git.Repository, base plumbing.Hash, req repository.PublishRequest) (plumbing.Hash, string, error) {
	root, when, err := baseTree(repo, base)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	dir, found, err := g.skillDir(ctx, root, when, req.Name)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	if !found {
		return plumbing.ZeroHash, "", fmt.Errorf("edit %s: %s has no skill of that name", req.Name, short(base))
	}
	entry, err := root.FindEntry(dir)
	if err != nil {
		return plumbing.ZeroHash, "", fmt.Errorf("edit %s: %s: %w", req.Name, dir, err)
	}
	folder, err := repo.TreeObject(entry.Hash)
	if err != nil {
		return plumbing.ZeroHash, "", fmt.Errorf("edit %s: read tree %s: %w", req.Name, dir, err)
	}
	entries := slices.Clone(folder.Entries)
	i := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == "SKILL.md" })
	if i < 0 || !entries[i].Mode.IsFile() || entries[i].Mode == filemode.Symlink {
		return plumbing.ZeroHash, "", fmt.Errorf("edit %s: %s/SKILL.md at %s is not a regular file", req.Name, dir, short(base))
	}
	w := &treeWriter{repo: repo}
	if entries[i].Hash, err = w.edit(entries[i].Hash, req.Edit); err != nil {
		return plumbing.ZeroHash, "", fmt.Errorf("edit %s/SKILL.md at %s: %w", dir, short(base), err)
	}
	folderHash, err := w.writeTree(entries)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	return w.commitFolder(root, base, dir, folderHash, req)
}

// edit stores what edit makes of the blob h and returns its hash.
func (w *treeWriter) edit(h plumbing.Hash, edit func([]byte) ([]byte, error)) (plumbing.Hash, error) {
	blob, err := w.repo.BlobObject(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if blob.Size > maxEditedFile {
		return plumbing.ZeroHash, fmt.Errorf("%d bytes, more than the %d an edit reads", blob.Size, maxEditedFile)
	}
	r, err := blob.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	out, err := edit(data)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	obj := w.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	ow, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := ow.Write(out); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := ow.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.store(obj)
}
