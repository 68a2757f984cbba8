package repository

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/skillsync/skillsync/skill"
)

// TreeKeyPrefix starts the DirKey of a git tree: a key that names the
// directory's content, which is what Options.Known is asked with.
const TreeKeyPrefix = "tree:"

// known takes the skill at dir from Options.Known when its content key
// is known there: no SKILL.md is parsed and no directory of it is read.
// It reports whether it took the skill; the error is a spent budget.
func (d *discovery) known(key, dir string) (bool, error) {
	if d.opts.Known == nil || !strings.HasPrefix(key, TreeKeyPrefix) {
		return false, nil
	}
	meta, files, ok := d.opts.Known(key)
	if !ok || meta.Path != dir || meta.Check() != nil || len(files) == 0 {
		return false, nil
	}
	for _, f := range files {
		if !fs.ValidPath(f.Path) || f.Path == "." || f.Size < 0 || (d.opts.MaxFileSize > 0 && f.Size > d.opts.MaxFileSize) || skill.GitPath(f.Path) {
			return false, nil // not what a listing gives: read the skill
		}
	}
	if listingSize(files) > d.opts.SkillSizeLimit() {
		return false, nil
	}
	// The entries a listing of these files reads, so a source comes out
	// of its budget as it would read whole (short of entries the listing
	// skipped: links, .git).
	if err := d.charge(listedEntries(files), dir); err != nil {
		return true, err
	}
	s := skill.FromMeta(meta, &lazySub{parent: d.fsys, dir: dir, key: key})
	s.Listing = files
	d.names = append(d.names, selectionName(s))
	if d.opts.Selects(s) {
		d.found = append(d.found, Found{Skill: s})
	}
	return true, nil
}

// recall takes the frontmatter of the skill at dir, whose folder is sub,
// from Options.Recalled, unparsed, when the answer is of a skill at dir
// and its main file holds what it held then; false when it cannot, and
// the skill is read.
func (d *discovery) recall(sub fs.FS, dir, name string) (skill.Skill, bool) {
	// A folder that cannot compare its files with a recorded tree (a
	// local one) is read, and asks nothing.
	if _, compares := sub.(SameContentFS); d.opts.Recalled == nil || !compares {
		return skill.Skill{}, false
	}
	meta, key, ok := d.opts.Recalled(name)
	if !ok || meta.Name != name || meta.Path != dir || meta.Check() != nil || !SameContent(sub, key, meta.File) {
		return skill.Skill{}, false
	}
	// skill.md is the main file only where there is no SKILL.md.
	if meta.File != "SKILL.md" {
		if _, err := fs.Stat(sub, "SKILL.md"); !errors.Is(err, fs.ErrNotExist) {
			return skill.Skill{}, false
		}
	}
	return skill.FromMeta(meta, sub), true
}

// listedEntries counts what walking a skill of these files charges: the
// skill directory read twice (once to find SKILL.md, once to list it),
// every subdirectory once, one for each read and one for each entry.
// The files are taken in path order, where the files below a folder come
// together: a folder is new when the file before is not below it. No
// set of folders is built, for each of the thousands of skills a sync
// takes from the cache.
func listedEntries(files []skill.File) int {
	if !slices.IsSortedFunc(files, func(a, b skill.File) int { return strings.Compare(a.Path, b.Path) }) {
		files = slices.SortedFunc(slices.Values(files), func(a, b skill.File) int { return strings.Compare(a.Path, b.Path) })
	}
	n, top, dirs := 0, 0, 0
	prev := ""
	for _, f := range files {
		n++ // the file's own entry
		if !strings.Contains(f.Path, "/") {
			top++
		}
		for p := path.Dir(f.Path); p != "."; p = path.Dir(p) {
			if strings.HasPrefix(prev, p+"/") {
				break
			}
			dirs++
			n++ // the directory's entry in its parent
			if !strings.Contains(p, "/") {
				top++
			}
		}
		prev = f.Path
	}
	// n covers one read of every entry; the skill directory's entries are
	// read a second time; each directory read costs one more.
	return n + top + 2 + dirs
}

// lazySub is fs.Sub(parent, dir), made on first use: a known skill whose
// files are never read costs no lookup of its tree. It names its content
// as the git tree it stands for (TreeHash).
type lazySub struct {
	parent fs.FS
	dir    string
	key    string

	once sync.Once
	fsys fs.FS
	err  error
}

func (l *lazySub) sub() (fs.FS, error) {
	l.once.Do(func() {
		l.fsys, l.err = fs.Sub(l.parent, l.dir)
		if l.err != nil {
			l.err = fmt.Errorf("skill %s: %w", l.dir, l.err)
		}
	})
	return l.fsys, l.err
}

// TreeHash returns the git hash of the tree the FS serves.
func (l *lazySub) TreeHash() string { return strings.TrimPrefix(l.key, TreeKeyPrefix) }

// ContentKey names the skill's content as the TreeFS it stands for does,
// without looking its tree up: a known skill keeps its fingerprint, so a
// sync does not read its files to find it unchanged.
func (l *lazySub) ContentKey() string { return "git-tree:" + l.TreeHash() }

// SameContent answers for the skill's directory, as the parent FS does.
func (l *lazySub) SameContent(key, name string) bool {
	fsys, err := l.sub()
	return err == nil && SameContent(fsys, key, name)
}

// Open opens name in the skill's directory.
func (l *lazySub) Open(name string) (fs.File, error) {
	fsys, err := l.sub()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return fsys.Open(name)
}

// Stat returns the FileInfo of name, as the parent FS reports it.
func (l *lazySub) Stat(name string) (fs.FileInfo, error) {
	fsys, err := l.sub()
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return fs.Stat(fsys, name)
}

// ReadDir lists the directory name, as the parent FS does.
func (l *lazySub) ReadDir(name string) ([]fs.DirEntry, error) {
	fsys, err := l.sub()
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return fs.ReadDir(fsys, name)
}

var (
	_ fs.StatFS    = (*lazySub)(nil)
	_ fs.ReadDirFS = (*lazySub)(nil)
	_ ContentKeyFS = (*lazySub)(nil)
)
