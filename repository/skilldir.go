package repository

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/skill"
)

// Checked is one skill directory Validate looked at.
type Checked struct {
	// Path is the skill's directory.
	Path     string
	Name     string
	Valid    bool
	Problems []skill.Problem
}

// ErrNoSkill is returned by Validate for a directory that holds no
// SKILL.md at all.
var ErrNoSkill = errors.New("no skill found")

// Validate checks every skill at or below path, on disk: a skill
// directory, a SKILL.md, or a directory of skills. A skill is valid when
// it has no error (with strict, no warning either). Each problem's File is
// a path on disk. It is ValidateIn with the process's environment.
func Validate(ctx context.Context, path string, strict bool) ([]Checked, error) {
	return ValidateIn(ctx, path, strict, hostenv.Env{})
}

// ValidateIn is Validate with env as the host whose git config says what
// git ignores: a folder in a git work tree is read as a sync reads it
// (GitView), so a file git ignores there, which no sync ever takes, is
// neither counted nor checked.
func ValidateIn(ctx context.Context, path string, strict bool, env hostenv.Env) ([]Checked, error) {
	return ValidateUnder(ctx, path, nil, strict, env)
}

// ValidateUnder is ValidateIn for a path that may lie below one of tops,
// the folders local sources read (the dir: sources', the layers'): it is
// read as the sync of that source reads it (OpenGitViewIn), the
// .gitignore files between applied, so that what validate checks is
// what the sync takes. A skill folder that source's rules leave out is
// checked all the same, with a gitignored-skill warning naming the rule:
// no sync takes it.
func ValidateUnder(ctx context.Context, path string, tops []string, strict bool, env hostenv.Env) ([]Checked, error) {
	_, dir, err := OpenSkillDir(path)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	fsys, err := OpenGitViewIn(dir, tops, env)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	found, loose, err := Scan(ctx, fsys, "", filepath.Base(fsys.Dir()), Options{Strict: strict})
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	var out []Checked
	for _, f := range found {
		out = append(out, Checked{Path: onDisk(dir, f.Skill.Path), Name: f.Skill.Name,
			Valid: !skill.HasError(f.Problems, strict), Problems: ProblemsOnDisk(dir, f.Problems)})
	}
	for _, p := range loose {
		ps := []skill.Problem{p}
		out = append(out, Checked{Path: onDisk(dir, p.Path), Valid: !skill.HasError(ps, strict), Problems: ProblemsOnDisk(dir, ps)})
	}
	// A folder named that git ignores as a whole is checked all the same,
	// but said to be: what is valid here is no skill git will commit. The
	// warning is no fault of a skill, and fails none, strict or not.
	if whole := GitIgnoresWhole(fsys); whole != nil {
		for i := range out {
			out[i].Problems = append(out[i].Problems, whole.Problem())
		}
	}
	if len(out) == 0 && SkillFileIgnored(fsys) {
		return nil, fmt.Errorf("validate %s: %w: its SKILL.md is one a .gitignore rule leaves out, so git will not commit it and no sync takes it: remove the rule, or take SKILL.md back with !SKILL.md", path, ErrNoSkill)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("validate %s: %w: no SKILL.md in it or in its folders", path, ErrNoSkill)
	}
	return out, nil
}

func onDisk(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

// ProblemsOnDisk returns problems with each File, relative to dir as
// discovery names it, turned into a path on disk.
func ProblemsOnDisk(dir string, problems []skill.Problem) []skill.Problem {
	out := make([]skill.Problem, len(problems))
	for i, p := range problems {
		p.File = onDisk(dir, p.File)
		out[i] = p
	}
	return out
}

// OpenSkillDir opens path, a folder or a skill's SKILL.md (then its
// folder), confined: no link out of it is followed. dir is that folder as
// the caller named it, for messages.
func OpenSkillDir(path string) (fsys *DirFS, dir string, err error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	dir = path
	if !info.IsDir() {
		if base := filepath.Base(path); base != "SKILL.md" && base != "skill.md" {
			return nil, "", errors.New("not a directory or a SKILL.md")
		}
		dir = filepath.Dir(path)
	}
	fsys, err = NewDirFS(dir)
	return fsys, dir, err
}

// SkillFiles returns the file system the files of a skill on disk at dir
// are read through, confined to dir. A skill of a local layer (local:
// global, workspace, user) is read as a sync of its layer reads it,
// without what git ignores (GitView): a .env that the user's .gitignore
// keeps out of the targets must not be served by skillsync serve, mcp or
// read either. inSource is the skill's slash path inside its layer
// (skill.Skill.Path): the .gitignore files of the layer's folders above
// the skill apply as they did to the sync, in a git work tree or not. A
// cached skill's folder holds only what a sync put there, and is read
// whole.
func SkillFiles(dir, inSource string, local bool, env hostenv.Env) (fs.FS, error) {
	d, err := NewDirFS(dir)
	if err != nil || !local {
		return d, err
	}
	top, sub := layerOf(dir, inSource)
	if sub == "." {
		return GitView(d, env)
	}
	td, err := NewDirFS(top)
	if err != nil {
		return nil, err
	}
	view, err := gitView(td, env)
	if err != nil {
		return nil, err
	}
	return view.below(d, sub), nil
}

// layerOf splits dir, a skill's folder at the slash path inSource inside
// its layer, into the layer's folder and inSource; a path dir does not
// end with is taken as the layer itself (sub ".").
func layerOf(dir, inSource string) (top, sub string) {
	sub = path.Clean("/" + inSource)[1:]
	if sub == "" {
		return dir, "."
	}
	top = filepath.Clean(dir)
	for range strings.Split(sub, "/") {
		top = filepath.Dir(top)
	}
	if filepath.Join(top, filepath.FromSlash(sub)) != filepath.Clean(dir) {
		return dir, "."
	}
	return top, sub
}

// OpenSkillFile opens file of the skill name, confined to the skill: file
// is relative to the skill's directory and must stay inside it ("..",
// absolute paths and symbolic links that lead out of it are refused). The
// skill's files are read from dir when it is not "" (a source-wide link
// into another skill is fine for discovery, but a read promises this
// skill's files), else from files. A directory is refused.
func OpenSkillFile(name, file, dir string, files fs.FS) (fs.File, error) {
	rel, err := SkillPath(file)
	if err != nil {
		return nil, &skillFileError{fmt.Sprintf("read %s %s: %v", name, file, err), fs.ErrPermission}
	}
	if dir != "" {
		dfs, err := NewDirFS(dir)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		files = dfs
	}
	f, err := files.Open(rel)
	if err != nil {
		return nil, readError(name, file, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, readError(name, file, err)
	}
	if info.IsDir() {
		f.Close()
		// No file there: a page for it is not found (serve's 404).
		return nil, &skillFileError{fmt.Sprintf("read %s %s: is a directory; skillsync show %s lists the files", name, file, name), fs.ErrNotExist}
	}
	return f, nil
}

// SkillPath checks that file names a path inside a skill, by its form
// alone, and returns it in io/fs form: a command checks its argument
// with it before it reads anything.
func SkillPath(file string) (string, error) {
	slashed := strings.ReplaceAll(file, "\\", "/")
	if path.IsAbs(slashed) || (len(file) > 1 && file[1] == ':') {
		return "", errors.New("absolute paths are refused: give a path relative to the skill")
	}
	clean := path.Clean(slashed)
	if clean == ".." || strings.HasPrefix(clean, "../") || !fs.ValidPath(clean) {
		return "", errors.New("the path leads out of the skill and is refused")
	}
	return clean, nil
}

func readError(name, file string, err error) error {
	switch {
	case errors.Is(err, ErrOutside):
		return &skillFileError{fmt.Sprintf("read %s %s: a symbolic link leads out of the skill; refused", name, file), fs.ErrPermission}
	case errors.Is(err, fs.ErrNotExist):
		return &skillFileError{fmt.Sprintf("read %s %s: no such file in the skill; skillsync show %s lists the files", name, file, name), fs.ErrNotExist}
	}
	return fmt.Errorf("read %s %s: %w", name, file, err)
}

// skillFileError is a file of a skill that is not there (fs.ErrNotExist)
// or is refused (fs.ErrPermission), for callers that answer each kind in
// their own way (serve's 404 and 403); its message says it all.
type skillFileError struct {
	msg  string
	kind error
}

func (e *skillFileError) Error() string { return e.msg }
func (e *skillFileError) Unwrap() error { return e.kind }
