package repository

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/skill"
)

// FolderFS is a folder on disk as skillsync reads it: a DirFS, or the
// IgnoreFS over one that leaves out what git ignores.
type FolderFS interface {
	fs.StatFS
	fs.ReadDirFS
	Lstat(name string) (fs.FileInfo, error)
	Dir() string
}

var (
	_ FolderFS = (*DirFS)(nil)
	_ FolderFS = (*IgnoreFS)(nil)
)

// GitView returns the folder of d as a sync reads a local source: in a
// git work tree, without what git ignores there (GitIgnoring); else
// (outside a work tree, or in a folder git ignores whole, which a sync
// reads whole) without what the .gitignore files inside d leave out
// (ownIgnoring), so that a publish never sends the .env a skill's own
// .gitignore names. Every command that reads a folder of the workspace directly
// (validate, propose, publish, the drafts) reads it through GitView, so
// that what it checks, hashes, copies or sends is what a sync of the
// same folder would take: a .env or node_modules/ that the user's
// .gitignore keeps out of their repository never reaches a team's. env
// is where the user's git config is found.
func GitView(d *DirFS, env hostenv.Env) (FolderFS, error) {
	ig, err := GitIgnoring(d, env)
	if err != nil {
		return nil, fmt.Errorf("read what git ignores in %s: %w", d.Dir(), err)
	}
	if ig == nil {
		// Outside a work tree, or in a folder git ignores whole: the
		// folder's own .gitignore files still say what its author keeps
		// out of git, and a publish puts the folder in a git repository.
		return ownIgnoring(d), nil
	}
	return ig, nil
}

// ownIgnoring is d seen through the .gitignore files inside it alone, as
// if it were a work tree's root with no other rules: what GitView serves
// of a folder git does not judge. A folder with none serves what d does.
func ownIgnoring(d *DirFS) *IgnoreFS {
	st := &ignores{d: d, dirs: map[string]*ignoreDir{".": {}}, maxDropped: DefaultMaxEntries}
	return &IgnoreFS{d: d, st: st}
}

// OpenGitView opens the folder dir, confined, through GitView.
func OpenGitView(dir string, env hostenv.Env) (FolderFS, error) {
	d, err := NewDirFS(dir)
	if err != nil {
		return nil, err
	}
	return GitView(d, env)
}

// MaxIgnoredListed bounds the names Ignored returns.
const MaxIgnoredListed = 100

// Ignored lists what view leaves out of its folder because git ignores
// it, in path order: a file by its slash path, a folder by its path and
// a trailing slash (what is below it is not walked). At most
// MaxIgnoredListed names are returned; more counts the rest. A folder
// not read through an IgnoreFS leaves nothing out. The .git of a
// repository inside the folder is not listed: no skill ever holds one.
// The walk stops at DefaultMaxEntries entries.
func Ignored(ctx context.Context, view FolderFS) (names []string, more int, err error) {
	ig, ok := view.(*IgnoreFS)
	if !ok {
		return nil, 0, nil
	}
	all, err := NewDirFS(ig.Dir())
	if err != nil {
		return nil, 0, err
	}
	seen := 0
	err = fs.WalkDir(all, ".", func(name string, de fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if name == "." {
			return err
		}
		if err != nil || skill.GitName(de.Name()) {
			if de != nil && de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if seen++; seen > DefaultMaxEntries {
			return fs.SkipAll
		}
		if _, err := ig.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if len(names) >= MaxIgnoredListed {
			more++
		} else if de.IsDir() {
			names = append(names, name+"/")
		} else {
			names = append(names, name)
		}
		if de.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	return names, more, err
}
