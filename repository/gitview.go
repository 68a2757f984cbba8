package repository

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

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
// (outside a work tree, or in a folder git ignores whole, which the user
// named and the work tree's rules do not judge) without what the
// .gitignore files inside d leave out (ownIgnoring), read once each.
// Every command that reads a folder of the workspace directly (sync of a
// dir source or a layer, validate, propose, publish, the drafts, read,
// serve and mcp through SkillFiles) reads it through GitView, so that
// what one checks, hashes, copies, serves or sends is what the others
// take: a .env or node_modules/ that the user's
// .gitignore keeps out of their repository never reaches a team's, nor
// an agent's folder that the team commits. env is where the user's git
// config is found.
func GitView(d *DirFS, env hostenv.Env) (FolderFS, error) {
	ig, err := gitView(d, env)
	if err != nil {
		return nil, err
	}
	return ig, nil
}

// gitView is GitView's IgnoreFS.
func gitView(d *DirFS, env hostenv.Env) (*IgnoreFS, error) {
	ig, whole, err := gitIgnoring(d, env)
	if err != nil {
		return nil, fmt.Errorf("read what git ignores in %s: %w", d.Dir(), err)
	}
	if ig == nil {
		// Outside a work tree, or in a folder git ignores whole: the
		// folder's own .gitignore files still say what its author keeps
		// out of git: publish puts the folder in a team's repository,
		// and a target that sync fills may be committed with the
		// workspace.
		own := ownIgnoring(d)
		own.st.whole, own.st.ownOnly = whole, true
		own.st.env = env
		return own, nil
	}
	return ig, nil
}

// IgnoredFolder says why git ignores, as a whole, a folder that was
// named to be read (a dir: source, validate's or publish's DIR): it is
// read all the same, by its own .gitignore files alone, and the command
// says so (Problem) rather than read it silently, since git will commit
// none of it.
type IgnoredFolder struct {
	// Dir is the folder named; At the folder git ignores, Dir or one
	// above it.
	Dir string `json:"dir"`
	At  string `json:"at"`
	// Rule is the rule as written, in File at Line.
	Rule string `json:"rule"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Source is the folder of the local source (a dir: source's, or a
	// layer's) below which Dir lies and whose sync therefore leaves it
	// out, skill and all; "" when Dir was named as a folder of its own.
	Source string `json:"source,omitempty"`
}

// Problem is the warning that says which rule ignores the folder.
func (f *IgnoredFolder) Problem() skill.Problem {
	why := fmt.Sprintf("it matches the rule %q (%s:%d)", f.Rule, f.File, f.Line)
	if f.At != f.Dir {
		why = fmt.Sprintf("the folder %s above it matches the rule %q (%s:%d)", f.At, f.Rule, f.File, f.Line)
	}
	if f.Source != "" {
		// Valid or not here, it is not synced: the user who checks it
		// learns why the agents never get it.
		return skill.Problem{Level: skill.Warning, Rule: RuleGitignoredSkill, Path: f.Dir, File: f.File, Line: f.Line,
			Message: fmt.Sprintf("the sync of %s leaves %s out: git ignores it, as %s; it is read here as you named it, but no sync takes it (change the rule, or move the skill, to have it synced)", f.Source, f.Dir, why)}
	}
	return skill.Problem{Level: skill.Warning, Rule: "gitignored-folder", Path: f.Dir, File: f.File, Line: f.Line,
		Message: fmt.Sprintf("git ignores %s: %s, so git will not commit it; skillsync reads it as you named it, without what the .gitignore files inside it name (remove the rule to have git keep it)", f.Dir, why)}
}

// GitIgnoresWhole returns why git ignores the folder view reads, as a
// whole, or nil when it does not.
func GitIgnoresWhole(view FolderFS) *IgnoredFolder {
	if ig, ok := view.(*IgnoreFS); ok {
		return ig.st.whole
	}
	return nil
}

// ownIgnoring is d seen through the .gitignore files inside it alone, as
// if it were a work tree's root with no other rules: what GitView serves
// of a folder git does not judge. A folder with none serves what d does.
func ownIgnoring(d *DirFS) *IgnoreFS {
	st := &ignores{d: d, dirs: map[string]*ignoreDir{".": {looked: true}}, maxDropped: DefaultMaxEntries}
	return &IgnoreFS{d: d, st: st}
}

// below returns the folder sub of w (a slash path inside it) judged as w
// judges it, by the same rules and no others, but confined to inner, a
// DirFS of that folder: a link out of it is refused. It is how a file of
// one skill is read as the sync of its whole source read it, the
// .gitignore files between the source's folder and the skill's applied
// (outside a work tree too), without a link into a sibling skill.
func (w *IgnoreFS) below(inner *DirFS, sub string) *IgnoreFS {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	// A copy: what the new FS learns (the folder's own .gitignore, read
	// through inner unless w read it already) stays in it.
	rel := w.inSource(sub)
	dir := w.st.dir(rel)
	w.st.nest(dir, rel, nil)
	v := *dir
	st := &ignores{d: inner, base: v.full, env: w.st.env, dirs: map[string]*ignoreDir{".": &v},
		bytes: w.st.bytes, maxDropped: w.st.maxDropped}
	return &IgnoreFS{d: inner, st: st}
}

// SkillFileIgnored reports whether view leaves out the SKILL.md its
// folder holds: a .gitignore rule names it, so git will not commit it and
// no sync takes the skill. A command that finds no SKILL.md through view
// says so, rather than that the folder has none.
func SkillFileIgnored(view FolderFS) bool {
	ig, ok := view.(*IgnoreFS)
	if !ok {
		return false
	}
	if _, err := ig.Lstat("SKILL.md"); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	info, err := ig.d.Lstat(ig.inSource("SKILL.md"))
	return err == nil && info.Mode().IsRegular()
}

// OpenGitView opens the folder dir, confined, through GitView.
func OpenGitView(dir string, env hostenv.Env) (FolderFS, error) {
	return OpenGitViewIn(dir, nil, env)
}

// OpenGitViewIn is OpenGitView for a dir that may lie below one of tops,
// the folders a sync reads (a layer's): such a dir is judged as the sync
// of that folder judges it, the .gitignore files between them applied
// (SkillFiles), so that what propose or publish copies of a skill is
// what the sync of its layer takes. Outside a work tree, GitView of dir
// alone would not read the layer's .gitignore, and a prod.env that it
// names, which sync keeps out of the targets, went into a draft.
func OpenGitViewIn(dir string, tops []string, env hostenv.Env) (FolderFS, error) {
	d, err := NewDirFS(dir)
	if err != nil {
		return nil, err
	}
	var left *IgnoredFolder
	for _, top := range tops {
		if top == "" {
			continue
		}
		td, err := NewDirFS(top)
		if err != nil {
			continue // no layer there: dir is judged alone
		}
		sub, ok := inside(td.Dir(), d.Dir())
		if !ok {
			continue
		}
		view, err := gitView(td, env)
		if err != nil {
			return nil, err
		}
		in := view.below(d, sub)
		if v := in.st.dirs["."]; v.hidden {
			// The layer's rules leave the folder out whole: named, it is
			// read by its own rules, as a folder git ignores is, and the
			// command says that the sync of the layer does not take it.
			if v.why != nil {
				left = &IgnoredFolder{Dir: d.Dir(), At: filepath.Join(td.Dir(), filepath.FromSlash(v.at)),
					Rule: v.why.text, File: v.why.file, Line: v.why.line, Source: td.Dir()}
			}
			break
		}
		if !view.st.ownOnly {
			break // in a work tree: dir alone is judged by the same rules
		}
		if w := view.st.whole; w != nil {
			named := *w
			named.Dir = d.Dir()
			in.st.whole = &named
		}
		return in, nil
	}
	view, err := gitView(d, env)
	if err != nil {
		return nil, err
	}
	if left != nil {
		view.st.whole = left
	}
	return view, nil
}

// inside returns the slash path of dir inside top (both as DirFS.Dir
// spells them) when dir lies strictly below it.
func inside(top, dir string) (string, bool) {
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
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
