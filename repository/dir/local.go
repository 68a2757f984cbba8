package dir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// Local is a source that is a directory on this machine. A layer's
// directory that does not exist is an empty source, so a workspace without
// skills/ works; a configured dir: source's is an error (NewSource).
type Local struct {
	source string
	dir    string
	opts   repository.Options
	// required makes a missing directory an error: the source then keeps
	// what the last sync brought instead of losing every skill.
	required bool
	// leftOut is what the listings of the last Sync left out by a
	// .gitignore rule (repository.LeftOutBy), for LeftOut.
	leftOut string
}

// NewLocal returns a Local source named source over dir, empty when dir
// does not exist: a layer (the workspace's skills/, the user's, the
// global one).
func NewLocal(source, dir string, opts repository.Options) *Local {
	return &Local{source: source, dir: dir, opts: opts}
}

// NewSource returns a Local source named source over dir that fails when
// dir does not exist: a configured dir: source, whose folder moved,
// unmounted or renamed must not read as a source that has no skills.
func NewSource(source, dir string, opts repository.Options) *Local {
	return &Local{source: source, dir: dir, opts: opts, required: true}
}

// Source returns the source's name.
func (l *Local) Source() string { return l.source }

// Dir returns the directory the source reads.
func (l *Local) Dir() string { return l.dir }

// Sync returns a revision derived from the names, sizes, modes and
// modification times of the directory's files, those in the folders of
// other tools (.claude/skills, ...) included: it changes when a file does,
// without reading any content but the plugin manifests'. The files git
// ignores are not among them (outside a work tree, those the folder's own
// .gitignore files leave out), so an edited .gitignore (or info/exclude)
// that ignores a file more or less changes it too.
func (l *Local) Sync(ctx context.Context) (repository.Revision, error) {
	fsys, err := l.open()
	if fsys == nil || err != nil {
		return "", err
	}
	rev, err := repository.LayoutRevision(ctx, fsys, false)
	if err != nil || !l.required {
		return rev, err
	}
	// A skill folder a rule leaves out appearing changes the revision, so
	// the sync reads the source and warns of it (Skills).
	l.leftOut = repository.LeftOutBy(fsys)
	return repository.LeftOutRevision(rev, fsys), nil
}

// LeftOut says what the listings of the last Sync left out by a
// .gitignore rule ("the folder pdf, by the rule ..."), "" for nothing:
// a sync that finds the source yields no skills says so, rather than
// suggest a path: (syncrun.Report.CheckYield). Sync's listings made it,
// so a sync with nothing new pays nothing for it.
func (l *Local) LeftOut() string { return l.leftOut }

// Skills discovers the skills in the directory.
func (l *Local) Skills(ctx context.Context) ([]skill.Skill, []skill.Problem, error) {
	fsys, err := l.open()
	if fsys == nil || err != nil {
		return nil, nil, err
	}
	skills, problems, err := repository.Discover(ctx, fsys, l.source, filepath.Base(fsys.Dir()), l.opts)
	if ig, ok := fsys.(*repository.IgnoreFS); ok && err == nil {
		ps := ig.Problems()
		// A dir: source names its folder; a layer's folder that git
		// ignores is the user's choice (their own skills kept out of the
		// team's repository), said on every sync it would be noise, and
		// so is a skill folder of a layer that a rule leaves out (a skill
		// of one's own kept out of the team's).
		if whole := repository.GitIgnoresWhole(ig); whole != nil && l.required {
			ps = append(ps, whole.Problem())
		}
		if !l.required {
			ps = slices.DeleteFunc(ps, func(p skill.Problem) bool { return p.Rule == repository.RuleGitignoredSkill })
		}
		for _, p := range ps {
			p.Source = l.source
			problems = append(problems, p)
		}
	}
	return skills, problems, err
}

// localFS is the FS a Local reads through.
type localFS interface {
	fs.FS
	Dir() string
}

// open returns the confined FS, or nil when the directory does not exist
// and is not required. A directory in a git work tree is read as git
// sees it: what git ignores there (a .env, node_modules/, build output)
// is left out, since a copy of it in the cache or a target would be
// committed with the workspace that git keeps it out of. A directory
// outside any work tree (or one git ignores whole) is read without what
// its own .gitignore files leave out, as publish and validate read it
// (repository.GitView): a .env its author keeps out of git is no more
// spread into agents' folders than sent to a team.
func (l *Local) open() (localFS, error) {
	fsys, err := repository.NewDirFS(l.dir)
	if errors.Is(err, fs.ErrNotExist) && l.required {
		return nil, fmt.Errorf("%w (set dir: to where the skills are, or remove the source)", err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("source %s: open %s: %w", l.source, l.dir, err)
	}
	info, err := os.Stat(fsys.Dir())
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", l.source, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("source %s: %s is not a directory", l.source, l.dir)
	}
	view, err := repository.GitView(fsys, l.opts.Env)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", l.source, err)
	}
	return view, nil
}

var _ repository.Repository = (*Local)(nil)
