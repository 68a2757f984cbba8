package repository

import (
	"context"
	"errors"
	"io/fs"
	"path"

	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// MaxDepth is how far below a source's root discovery looks for skills.
const MaxDepth = 4

// Discover finds the skills in fsys: directories holding a SKILL.md (or
// skill.md), from the root down to MaxDepth levels below it. Directories
// whose names start with ".", node_modules and _drafts (proposed skills
// waiting for the promotion gate, never skills yet) are not entered, nor
// are a skill's own subdirectories. rootName is the base name of the source
// root, the directory name a skill at the root itself should carry.
//
// Discover returns the usable skills in lexical order of their paths, and
// every problem found, each naming source. A skill with an error, or with
// a warning under opts.Strict, is left out.
func Discover(ctx context.Context, fsys fs.FS, source, rootName string, opts Options) ([]skill.Skill, []skill.Problem, error) {
	found, problems, err := Scan(ctx, fsys, source, rootName, opts)
	if err != nil {
		return nil, nil, err
	}
	var skills []skill.Skill
	for _, f := range found {
		problems = append(problems, f.Problems...)
		if f.Valid() {
			skills = append(skills, f.Skill)
		}
	}
	return skills, problems, nil
}

// Found is one skill directory discovery found, usable or not.
type Found struct {
	Skill    skill.Skill
	Problems []skill.Problem
}

// Valid reports whether the skill has no error.
func (f Found) Valid() bool { return !skill.HasError(f.Problems, false) }

// Scan is Discover that also returns the skills with errors, each with its
// own problems, for reports such as skillsync validate. The problems it
// returns apart are the ones no skill owns.
func Scan(ctx context.Context, fsys fs.FS, source, rootName string, opts Options) ([]Found, []skill.Problem, error) {
	d := discovery{fsys: fsys, opts: opts}
	if err := d.dir(ctx, ".", rootName, 0); err != nil {
		return nil, nil, err
	}
	for i := range d.problems {
		d.problems[i].Source = source
	}
	for _, f := range d.found {
		for i := range f.Problems {
			f.Problems[i].Source = source
		}
	}
	return d.found, d.problems, nil
}

type discovery struct {
	fsys     fs.FS
	opts     Options
	found    []Found
	problems []skill.Problem
}

func (d *discovery) dir(ctx context.Context, dir, name string, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := fs.ReadDir(d.fsys, dir)
	if err != nil {
		if dir == "." {
			return err
		}
		d.problem(skill.Warning, "dir-unreadable", dir, "cannot read directory: "+err.Error())
		return nil
	}
	for _, e := range entries {
		if e.Name() == "SKILL.md" || e.Name() == "skill.md" {
			d.load(dir, name)
			return nil
		}
	}
	if depth >= MaxDepth {
		return nil
	}
	for _, e := range entries {
		if e.Name()[0] == '.' || e.Name() == "node_modules" || e.Name() == workspace.DraftsName {
			continue
		}
		child := path.Join(dir, e.Name())
		if !d.isDir(e, child) {
			continue
		}
		if err := d.dir(ctx, child, e.Name(), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// isDir reports whether e is a directory, following a symbolic link when
// fsys allows it and reporting one it refuses.
func (d *discovery) isDir(e fs.DirEntry, name string) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := fs.Stat(d.fsys, name)
	if err != nil {
		if errors.Is(err, ErrOutside) {
			d.problem(skill.Warning, "symlink-outside", name, "symbolic link is skipped: it "+ErrOutside.Error())
		}
		return false
	}
	return info.IsDir()
}

func (d *discovery) load(dir, name string) {
	sub, err := fs.Sub(d.fsys, dir)
	if err != nil {
		d.problem(skill.Error, "dir-unreadable", dir, err.Error())
		return
	}
	s, problems := skill.Options{Strict: d.opts.Strict}.Load(sub, dir, name)
	if !skill.HasError(problems, d.opts.Strict) {
		files, fileProblems := skill.ListFiles(sub, dir, d.opts.MaxFileSize)
		s.Listing = files
		for i := range fileProblems {
			fileProblems[i].Skill = s.Name
		}
		problems = append(problems, fileProblems...)
	}
	if d.opts.Strict {
		problems = skill.Strict(problems)
	}
	d.found = append(d.found, Found{Skill: s, Problems: problems})
}

func (d *discovery) problem(level skill.Level, rule, dir, msg string) {
	d.problems = append(d.problems, skill.Problem{Level: level, Rule: rule, Path: dir, File: dir, Message: msg})
}
