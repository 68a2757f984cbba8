package materialize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/platform"
)

// dest is the destination a writer changes (a target folder, the cache),
// held open as a platform.Tree once it has been checked: every file
// created, folder made, rename, exchange and removal below it resolves
// its path from that folder, never through a link another process swaps
// in on the way after the check (DESIGN rule 1). The writer keeps full
// paths; dest makes them paths below the tree. A path not below it, and
// every path of a writer without a tree (tests that make one alone),
// goes by path as os does.
type dest struct{ tree *platform.Tree }

// below is p as a path below the tree; false when dest goes by path.
func (d dest) below(p string) (string, bool) {
	rel, ok := d.in(p)
	return rel, ok && rel != "."
}

// in is below, the tree's own folder included (".").
func (d dest) in(p string) (string, bool) {
	if d.tree == nil {
		return "", false
	}
	rel, err := filepath.Rel(d.tree.Path(), p)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", false
	}
	return rel, true
}

// syncDir makes the renames in the folder p durable (platform.SyncDir).
func (d dest) syncDir(p string) error {
	if rel, ok := d.in(p); ok {
		return d.tree.SyncDir(rel)
	}
	return platform.SyncDir(p)
}

// syncFS flushes the file system holding the folder p (platform.SyncFS).
func (d dest) syncFS(p string) error {
	if rel, ok := d.in(p); ok {
		return d.tree.SyncFS(rel)
	}
	return platform.SyncFS(p)
}

// lstat describes p, a link itself rather than what it points to.
func (d dest) lstat(p string) (fs.FileInfo, error) {
	if rel, ok := d.below(p); ok {
		return d.tree.Lstat(rel)
	}
	return os.Lstat(p)
}

// pin holds the folder p open in the tree (platform.Tree.Pin), for a
// writer's staging; nothing where p is not below the tree.
func (d dest) pin(p string) error {
	if rel, ok := d.below(p); ok {
		return d.tree.Pin(rel)
	}
	return nil
}

func (d dest) openFile(p string, flag int, perm fs.FileMode) (*os.File, error) {
	if rel, ok := d.below(p); ok {
		return d.tree.OpenFile(rel, flag, perm)
	}
	return platform.OpenFile(p, flag, perm)
}

func (d dest) mkdir(p string, perm fs.FileMode) error {
	if rel, ok := d.below(p); ok {
		return d.tree.Mkdir(rel, perm)
	}
	return os.Mkdir(p, perm)
}

func (d dest) remove(p string) error {
	if rel, ok := d.below(p); ok {
		return d.tree.Remove(rel)
	}
	return os.Remove(p)
}

func (d dest) removeAll(p string) error {
	if rel, ok := d.below(p); ok {
		return d.tree.RemoveAll(rel)
	}
	return os.RemoveAll(p)
}

func (d dest) symlink(target, p string) error {
	if rel, ok := d.below(p); ok {
		return d.tree.Symlink(target, rel)
	}
	return os.Symlink(target, p)
}

// two runs a change of two paths through the tree when both are below
// it, else byPath.
func (d dest) two(a, b string, inTree func(a, b string) error, byPath func(a, b string) error) error {
	ra, okA := d.below(a)
	rb, okB := d.below(b)
	if okA && okB {
		return inTree(ra, rb)
	}
	return byPath(a, b)
}

func (d dest) rename(from, to string) error {
	if d.tree == nil {
		return os.Rename(from, to)
	}
	return d.two(from, to, d.tree.Rename, os.Rename)
}

// replaceFile renames the file from over to (platform.ReplaceFile).
func (d dest) replaceFile(from, to string) error {
	if d.tree == nil {
		return platform.ReplaceFile(from, to)
	}
	return d.two(from, to, d.tree.Rename, platform.ReplaceFile)
}

// renameNoReplace renames from to to, never replacing what is at to
// (platform.RenameNoReplace). Through the tree it claims to's name
// first as platform.RenameNoReplaceByLink does (a link for a file, an
// exclusive mkdir for a folder or a link to one); the rename then
// replaces only what it claimed.
func (d dest) renameNoReplace(from, to string) error {
	rf, okF := d.below(from)
	rt, okT := d.below(to)
	if !okF || !okT {
		return platform.RenameNoReplace(from, to)
	}
	return d.tree.RenameNoReplace(rf, rt)
}

func (d dest) link(from, to string) error {
	if d.tree == nil {
		return os.Link(from, to)
	}
	return d.two(from, to, d.tree.Link, os.Link)
}

// exchange swaps a and b in one step where the system can
// (platform.Exchange), or gives platform.ErrNoExchange.
func (d dest) exchange(a, b string) error {
	if d.tree == nil {
		return platform.Exchange(a, b)
	}
	return d.two(a, b, d.tree.Exchange, platform.Exchange)
}

// mkdirNoFollow makes the folder p unless it is there, refusing a link
// or a file in its place (atomicfile.MkdirNoFollow).
func (d dest) mkdirNoFollow(p string) error {
	if _, ok := d.below(p); !ok {
		return atomicfile.MkdirNoFollow(p, 0o755)
	}
	if err := d.mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// Looked at through the tree, as what is written there will be.
	f, err := d.openFile(p, os.O_RDONLY, 0)
	if errors.Is(err, platform.ErrLink) {
		return fmt.Errorf("%s %w", p, atomicfile.ErrSymlink)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.IsDir() {
		return fmt.Errorf("%s %w", p, errNotFolder)
	}
	return nil
}

// errNotFolder is a file where mkdirNoFollow wants a folder.
var errNotFolder = errors.New("is not a directory")

// sweep is atomicfile.Sweep(dir, 0, names...) through the tree: the
// temporary files of names that a killed run left in dir (which only
// the holder of dir's lock writes) are removed from the folder held
// open, not from wherever dir's path leads now.
func (d dest) sweep(dir string, names ...string) {
	rel, ok := d.in(dir)
	if !ok {
		atomicfile.Sweep(dir, 0, names...)
		return
	}
	f, err := d.tree.OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		for _, n := range names {
			// atomicfile's temporary names: ".<name>.tmp-<random>".
			if p := "." + n + ".tmp-"; len(e.Name()) > len(p) && strings.HasPrefix(e.Name(), p) {
				_ = d.remove(filepath.Join(dir, e.Name()))
				break
			}
		}
	}
}

func (d dest) chtimes(p string, atime, mtime time.Time) error {
	if rel, ok := d.below(p); ok {
		return d.tree.Chtimes(rel, atime, mtime)
	}
	return os.Chtimes(p, atime, mtime)
}

// chmodDir sets the mode of the folder p, opened without following a
// link. Anything else there (a hard link to another name's file swapped
// in after p was looked at) keeps its mode.
func (d dest) chmodDir(p string, perm fs.FileMode) error {
	f, err := d.openFile(p, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	return f.Chmod(perm)
}

// writeFile replaces p with data as atomicfile.WriteFileOnly does (a
// temporary file of the same name, flushed, renamed over p, the folder
// flushed), through the tree: a record or a mark lands in the folder
// that was checked. Its temporary files are atomicfile's, which
// atomicfile.Sweep knows.
func (d dest) writeFile(p string, data []byte, perm fs.FileMode) error {
	return d.write(p, data, perm, true)
}

// writeFileUnflushed is writeFile for a caller that flushes the file
// system next (syncFS, where it covers renames): the file and its folder
// are not flushed on their own.
func (d dest) writeFileUnflushed(p string, data []byte, perm fs.FileMode) error {
	return d.write(p, data, perm, false)
}

func (d dest) write(p string, data []byte, perm fs.FileMode, flush bool) (err error) {
	if _, ok := d.below(p); !ok {
		return atomicfile.WriteFileOnly(p, data, perm)
	}
	f, tmp, err := atomicfile.CreateTemp(d.openFile, p)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			_ = d.remove(tmp)
		}
	}()
	fill := atomicfile.Fill
	if !flush {
		fill = atomicfile.FillUnflushed
	}
	if err = fill(f, p, data, perm); err != nil {
		return err
	}
	if err = d.rename(tmp, p); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if !flush {
		return nil
	}
	return d.syncDir(filepath.Dir(p))
}

// writeJSON writes v as jsonfile.WriteOnly does (indented, a final
// newline), unless p already holds exactly those bytes.
func (d dest) writeJSON(p string, v any, perm fs.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", p, err)
	}
	data = append(data, '\n')
	if d.holds(p, data) {
		return nil
	}
	return d.writeFile(p, data, perm)
}

// holds reports whether the regular file p holds exactly data.
func (d dest) holds(p string, data []byte) bool {
	f, err := d.openFile(p, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() != int64(len(data)) {
		return false
	}
	cur, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(cur, data)
}
