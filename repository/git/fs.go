package git

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/skillsync/skillsync/repository"
)

// ErrSubmodule is returned for a tree entry that is a git submodule:
// skillsync reads one repository and does not fetch others.
var ErrSubmodule = errors.New("is a git submodule, which skillsync does not fetch")

// maxLinkHops bounds symbolic link resolution, as the kernel's ELOOP does.
const maxLinkHops = repository.MaxLinkHops

// TreeFS is an fs.FS over a git tree, read straight from the object store:
// no worktree, no checkout. Modes come from git (100755 is executable). A
// symbolic link whose target stays inside the FS is served as the target's
// content; one that leads outside gives ErrOutside. Sub returns a TreeFS
// confined to the subtree, so a skill's links must stay inside the skill.
//
// Sizes come from the object headers and contents stream from the packs:
// a blob is never inflated to learn its size, and one over the FS's size
// limit is refused by Open with ErrTooLarge before any of it is inflated.
type TreeFS struct {
	root  *object.Tree
	mtime time.Time
	// blobs reads blobs straight from the store's packs; nil, or an
	// object that is not packed, falls back to go-git.
	blobs *packedObjects
	// maxFileSize is the largest blob Open reads; 0 means no limit.
	maxFileSize int64
	// trees holds the trees read so far, shared with every Sub: a path
	// is resolved from the root at each call, and go-git decodes a tree
	// again at every read of it.
	trees *treeCache
}

// treeCache keeps decoded trees by hash, up to a number of entries.
type treeCache struct {
	mu      sync.Mutex
	trees   map[plumbing.Hash]*object.Tree
	entries int
	// packs, when set, reads trees from the store's packs, with s (the
	// store's go-git storage) for what they do not hold; otherwise a
	// tree is read through its parent's storage.
	packs *packedObjects
	s     storer.EncodedObjectStorer
	// indexes holds, for each tree of indexFrom entries or more looked up
	// so far, by its hash, where each name's entry is; indexed counts
	// their entries, bounded as the trees' are. By hash, not by the tree
	// read: a tree the cache did not keep is read again at each lookup,
	// and one index serves every read of it. Their own lock: c.mu is
	// held through reads of go-git's storage.
	indexMu sync.RWMutex
	indexes map[plumbing.Hash]map[string]int
	indexed int
}

// maxCachedEntries bounds the tree entries a treeCache keeps: some 100
// bytes each, so a few tens of MiB for a repository of 10,000 skills.
const maxCachedEntries = 400_000

func newTreeCache() *treeCache {
	return &treeCache{trees: map[plumbing.Hash]*object.Tree{}, indexes: map[plumbing.Hash]map[string]int{}}
}

// indexFrom is the size from which a tree's entries are found through an
// index rather than by a scan. Every path is resolved from the root, so
// each file a sync reads of a skill under skills/ scanned that folder's
// entries: with 10,000 skills, 74 ms of a 1% sync's CPU.
const indexFrom = 64

// entry returns tree's entry called name. Like a scan, it finds the first
// of the entries a hostile tree names alike. A tree's index is of its
// hash, which is that of its content: trees read for one hash hold the
// same entries in the same order.
func (c *treeCache) entry(tree *object.Tree, name string) (*object.TreeEntry, bool) {
	if len(tree.Entries) < indexFrom || tree.Hash.IsZero() {
		return findEntry(tree, name)
	}
	c.indexMu.RLock()
	index, ok := c.indexes[tree.Hash]
	c.indexMu.RUnlock()
	if !ok {
		if index, ok = c.index(tree); !ok {
			return findEntry(tree, name)
		}
	}
	i, found := index[name]
	if !found {
		return nil, false
	}
	if i >= len(tree.Entries) || tree.Entries[i].Name != name {
		// Not the entries the index was built from: a store whose object
		// does not hold what its hash says. The scan answers for it.
		return findEntry(tree, name)
	}
	return &tree.Entries[i], true
}

// index builds and keeps tree's index, or reports false when the bound
// on indexed entries is reached.
func (c *treeCache) index(tree *object.Tree) (map[string]int, bool) {
	c.indexMu.Lock()
	defer c.indexMu.Unlock()
	if index, ok := c.indexes[tree.Hash]; ok {
		return index, true
	}
	if c.indexed+len(tree.Entries) > maxCachedEntries {
		return nil, false
	}
	index := make(map[string]int, len(tree.Entries))
	for i := range tree.Entries {
		if _, seen := index[tree.Entries[i].Name]; !seen {
			index[tree.Entries[i].Name] = i
		}
	}
	c.indexes[tree.Hash] = index
	c.indexed += len(tree.Entries)
	return index, true
}

// subtree returns the tree entry e of tree names. A tree the packs hold
// is read outside the cache's lock, so several skills' trees are read at
// once (two readers of one tree may both read it; one is kept). go-git's
// Tree builds an index of its entries at the first lookup, and its
// storage fills its own without locks, so a read through go-git is made
// under the cache's lock.
func (c *treeCache) subtree(tree *object.Tree, e *object.TreeEntry) (*object.Tree, error) {
	c.mu.Lock()
	sub, ok := c.trees[e.Hash]
	c.mu.Unlock()
	if ok {
		return sub, nil
	}
	sub, err := c.read(tree, e)
	if err != nil {
		return nil, err
	}
	return c.keep(e.Hash, sub), nil
}

// keep caches tree, read for hash, and returns the tree cached for hash:
// tree, or one another reader kept first.
func (c *treeCache) keep(hash plumbing.Hash, tree *object.Tree) *object.Tree {
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.trees[hash]; ok {
		return kept
	}
	// A tree read through its parent is found by name again: a hostile
	// tree naming two entries alike may give another tree than hash
	// names, kept for nobody.
	if tree.Hash == hash && c.entries+len(tree.Entries) <= maxCachedEntries {
		c.trees[hash] = tree
		c.entries += len(tree.Entries)
	}
	return tree
}

// byHash returns the tree hash names, which need not be below any tree
// read so far (an earlier version of a skill). It needs the store: a
// cache without packs reads trees only through their parents.
func (c *treeCache) byHash(hash plumbing.Hash) (*object.Tree, error) {
	c.mu.Lock()
	tree, ok := c.trees[hash]
	c.mu.Unlock()
	if ok {
		return tree, nil
	}
	if c.packs == nil {
		return nil, plumbing.ErrObjectNotFound
	}
	mo, err := c.packs.readMeta(hash, plumbing.TreeObject)
	switch {
	case err == nil:
		tree, err = object.DecodeTree(c.s, mo)
	case errors.Is(err, plumbing.ErrObjectNotFound):
		err = c.storage(func() error {
			var err error
			tree, err = object.GetTree(c.s, hash)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return c.keep(hash, tree), nil
}

// read reads the tree e of tree names: from the packs without a lock,
// else through go-git under the cache's lock.
func (c *treeCache) read(tree *object.Tree, e *object.TreeEntry) (*object.Tree, error) {
	if c.packs != nil {
		mo, err := c.packs.readMeta(e.Hash, plumbing.TreeObject)
		if err == nil {
			return object.DecodeTree(c.s, mo)
		}
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, err
		}
	}
	var sub *object.Tree
	err := c.storage(func() error {
		var err error
		if c.packs != nil {
			sub, err = object.GetTree(c.s, e.Hash)
		} else {
			sub, err = tree.Tree(e.Name)
		}
		return err
	})
	return sub, err
}

// storage runs read, a read through go-git's storage (an object the
// packs do not hold: a loose one), under the cache's lock, as subtree's
// are: the storage fills its indexes at first use, without locks of its
// own, and a sync reads several skills at once.
func (c *treeCache) storage(read func() error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return read()
}

// ErrTooLarge is wrapped by the error of opening a file over the size
// limit of its source.
var ErrTooLarge = errors.New("file is over the size limit")

// maxLinkSize bounds a symbolic link's target, as PATH_MAX does.
const maxLinkSize = 4096

// ConcurrentReads marks a TreeFS as safe to read from several goroutines
// at once: the packs are read with pread, and the tree cache and go-git's
// storage are used under the cache's lock.
func (t *TreeFS) ConcurrentReads() {}

// TreeHash returns the git hash of the tree the FS serves: equal hashes,
// equal content, so a sync can skip a skill whose tree did not change.
func (t *TreeFS) TreeHash() string { return t.root.Hash.String() }

// ContentKey names the content of the tree: two TreeFS with one key hold
// the same files, byte for byte and mode for mode.
func (t *TreeFS) ContentKey() string { return "git-tree:" + t.TreeHash() }

// blobSize returns the size of the blob e names, from its header.
func (t *TreeFS) blobSize(tree *object.Tree, e *object.TreeEntry) (int64, error) {
	if t.blobs != nil {
		size, err := t.blobs.Size(e.Hash)
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return size, err
		}
	}
	var size int64
	err := t.trees.storage(func() error {
		f, err := tree.TreeEntryFile(e)
		if err == nil {
			size = f.Size
		}
		return err
	})
	return size, err
}

// openBlob streams the blob e names.
func (t *TreeFS) openBlob(tree *object.Tree, e *object.TreeEntry) (io.ReadCloser, error) {
	if t.blobs != nil {
		r, err := t.blobs.Open(e.Hash)
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			return r, err
		}
	}
	var r io.ReadCloser
	err := t.trees.storage(func() error {
		f, err := tree.TreeEntryFile(e)
		if err == nil {
			r, err = f.Reader()
		}
		return err
	})
	return r, err
}

// NewTreeFS returns a TreeFS over tree. mtime is what every file reports as
// its modification time, typically the commit's time.
func NewTreeFS(tree *object.Tree, mtime time.Time) *TreeFS {
	return &TreeFS{root: tree, mtime: mtime, trees: newTreeCache()}
}

// node is a resolved path: a tree, or a file entry with its blob.
type node struct {
	name  string
	tree  *object.Tree // set for directories
	entry object.TreeEntry
}

// lookup resolves name, following symbolic links in every component.
func (t *TreeFS) lookup(op, name string) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, err := t.resolve(name, 0)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if name != "." {
		// A followed link keeps its own name, as stat(2) reports it.
		n.name = path.Base(name)
	}
	return n, nil
}

func (t *TreeFS) resolve(name string, hops int) (*node, error) {
	cur := &node{name: ".", tree: t.root}
	if name == "." {
		return cur, nil
	}
	parts := strings.Split(name, "/")
	for i, part := range parts {
		if cur.tree == nil {
			return nil, fs.ErrNotExist
		}
		e, ok := t.trees.entry(cur.tree, part)
		if !ok {
			return nil, fs.ErrNotExist
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := t.trees.subtree(cur.tree, e)
			if err != nil {
				return nil, err
			}
			cur = &node{name: part, tree: sub, entry: *e}
		case filemode.Symlink:
			if hops >= maxLinkHops {
				return nil, repository.ErrLinkLoop
			}
			target, err := t.readLink(cur.tree, e)
			if err != nil {
				return nil, err
			}
			dir := path.Join(parts[:i]...)
			next := path.Join(dir, target)
			if path.IsAbs(target) || next == ".." || strings.HasPrefix(next, "../") {
				return nil, repository.ErrOutside
			}
			rest := append([]string{next}, parts[i+1:]...)
			return t.resolve(path.Join(rest...), hops+1)
		case filemode.Submodule:
			return nil, ErrSubmodule
		default:
			if i != len(parts)-1 {
				return nil, fs.ErrNotExist
			}
			cur = &node{name: part, entry: *e}
		}
	}
	return cur, nil
}

func validEntryName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

func findEntry(tree *object.Tree, name string) (*object.TreeEntry, bool) {
	for i := range tree.Entries {
		if tree.Entries[i].Name == name {
			return &tree.Entries[i], true
		}
	}
	return nil, false
}

func (t *TreeFS) readLink(tree *object.Tree, e *object.TreeEntry) (string, error) {
	size, err := t.blobSize(tree, e)
	if err != nil {
		return "", err
	}
	if size > maxLinkSize {
		return "", fmt.Errorf("symbolic link target of %d bytes: %w", size, ErrTooLarge)
	}
	r, err := t.openBlob(tree, e)
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxLinkSize))
	return string(b), err
}

// Open opens name for reading. A file's content is streamed from the
// store, and a file over the FS's size limit is refused with ErrTooLarge.
func (t *TreeFS) Open(name string) (fs.File, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.tree != nil {
		return &treeDir{fs: t, node: n, path: name}, nil
	}
	if t.blobs != nil {
		// One read of the headers for the size and the content.
		r, size, err := t.blobs.OpenSized(n.entry.Hash, t.maxFileSize)
		switch {
		case errors.Is(err, errOverLimit):
			return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: %d bytes, over the limit of %d", ErrTooLarge, size, t.maxFileSize)}
		case err == nil:
			return &treeFile{rc: r, info: t.info(n, size)}, nil
		case !errors.Is(err, plumbing.ErrObjectNotFound):
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	size, err := t.blobSize(t.root, &n.entry)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if t.maxFileSize > 0 && size > t.maxFileSize {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: %d bytes, over the limit of %d", ErrTooLarge, size, t.maxFileSize)}
	}
	r, err := t.openBlob(t.root, &n.entry)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &treeFile{rc: r, info: t.info(n, size)}, nil
}

// Stat returns the FileInfo of name, following symbolic links.
func (t *TreeFS) Stat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return t.nodeInfo(n)
}

func (t *TreeFS) nodeInfo(n *node) (fs.FileInfo, error) {
	if n.tree != nil {
		return t.info(n, 0), nil
	}
	size, err := t.blobSize(t.root, &n.entry)
	if err != nil {
		return nil, err
	}
	return t.info(n, size), nil
}

// ReadDir lists the directory name in lexical order. Symbolic links are
// reported as links and submodules as irregular entries.
func (t *TreeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if n.tree == nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return t.entries(n.tree), nil
}

func (t *TreeFS) entries(tree *object.Tree) []fs.DirEntry {
	out := make([]fs.DirEntry, 0, len(tree.Entries))
	for _, e := range tree.Entries {
		// git stores whatever a tree object says; a name such as ".." or
		// one holding "/" could lead a walker out of the tree. Such an
		// entry cannot be a file of a skill and is not listed.
		if !validEntryName(e.Name) {
			continue
		}
		out = append(out, &treeEntry{fs: t, tree: tree, entry: e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Sub returns a TreeFS rooted at dir, whose links must stay inside dir.
func (t *TreeFS) Sub(dir string) (fs.FS, error) {
	n, err := t.lookup("sub", dir)
	if err != nil {
		return nil, err
	}
	if n.tree == nil {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: errors.New("not a directory")}
	}
	return &TreeFS{root: n.tree, mtime: t.mtime, blobs: t.blobs, maxFileSize: t.maxFileSize, trees: t.trees}, nil
}

func (t *TreeFS) info(n *node, size int64) *treeInfo {
	mode := fs.FileMode(0o644)
	switch {
	case n.tree != nil:
		mode = fs.ModeDir | 0o755
	case n.entry.Mode == filemode.Executable:
		mode = 0o755
	}
	return &treeInfo{name: n.name, size: size, mode: mode, mtime: t.mtime}
}

// treeEntry is a DirEntry that reports the entry's own type.
type treeEntry struct {
	fs    *TreeFS
	tree  *object.Tree
	entry object.TreeEntry
}

func (e *treeEntry) Name() string { return e.entry.Name }
func (e *treeEntry) IsDir() bool  { return e.entry.Mode == filemode.Dir }

func (e *treeEntry) Type() fs.FileMode {
	switch e.entry.Mode {
	case filemode.Dir:
		return fs.ModeDir
	case filemode.Symlink:
		return fs.ModeSymlink
	case filemode.Submodule:
		return fs.ModeIrregular
	}
	return 0
}

func (e *treeEntry) Info() (fs.FileInfo, error) {
	switch e.entry.Mode {
	case filemode.Submodule:
		return nil, &fs.PathError{Op: "stat", Path: e.entry.Name, Err: ErrSubmodule}
	case filemode.Dir:
		return &treeInfo{name: e.entry.Name, mode: fs.ModeDir | 0o755, mtime: e.fs.mtime}, nil
	}
	size, err := e.fs.blobSize(e.tree, &e.entry)
	if err != nil {
		return nil, err
	}
	mode := fs.FileMode(0o644)
	switch e.entry.Mode {
	case filemode.Executable:
		mode = 0o755
	case filemode.Symlink:
		mode = fs.ModeSymlink | 0o777
	}
	return &treeInfo{name: e.entry.Name, size: size, mode: mode, mtime: e.fs.mtime}, nil
}

func (e *treeEntry) String() string { return fs.FormatDirEntry(e) }

type treeInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (i *treeInfo) Name() string       { return i.name }
func (i *treeInfo) Size() int64        { return i.size }
func (i *treeInfo) Mode() fs.FileMode  { return i.mode }
func (i *treeInfo) ModTime() time.Time { return i.mtime }
func (i *treeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *treeInfo) Sys() any           { return nil }

type treeFile struct {
	rc   io.ReadCloser
	info *treeInfo
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *treeFile) Read(p []byte) (int, error) { return f.rc.Read(p) }
func (f *treeFile) Close() error               { return f.rc.Close() }

// treeDir is an open directory; ReadDir pages through its entries.
type treeDir struct {
	fs      *TreeFS
	node    *node
	path    string
	entries []fs.DirEntry
	offset  int
}

func (d *treeDir) Stat() (fs.FileInfo, error) { return d.fs.info(d.node, 0), nil }
func (d *treeDir) Close() error               { return nil }

func (d *treeDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.path, Err: errors.New("is a directory")}
}

func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.entries == nil {
		d.entries = d.fs.entries(d.node.tree)
	}
	rest := d.entries[d.offset:]
	if n <= 0 {
		d.offset = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.offset += n
	return rest[:n], nil
}

var (
	_ fs.StatFS    = (*TreeFS)(nil)
	_ fs.ReadDirFS = (*TreeFS)(nil)
	_ fs.SubFS     = (*TreeFS)(nil)
)
