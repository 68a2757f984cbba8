package skillsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/repository"
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

// Validate checks every skill at or below path: a skill directory, a
// SKILL.md, or a directory of skills. A skill is valid when it has no
// error (with strict, no warning either). Each problem's File is a path
// on disk.
func Validate(ctx context.Context, path string, strict bool) ([]Checked, error) {
	fsys, dir, err := openSkillDir(path)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	found, loose, err := repository.Scan(ctx, fsys, "", filepath.Base(fsys.Dir()), repository.Options{Strict: strict})
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	var out []Checked
	for _, f := range found {
		out = append(out, Checked{Path: onDisk(dir, f.Skill.Path), Name: f.Skill.Name,
			Valid: !skill.HasError(f.Problems, strict), Problems: problemsOnDisk(dir, f.Problems)})
	}
	for _, p := range loose {
		ps := []skill.Problem{p}
		out = append(out, Checked{Path: onDisk(dir, p.Path), Valid: !skill.HasError(ps, strict), Problems: problemsOnDisk(dir, ps)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("validate %s: %w: no SKILL.md in it or in its folders", path, ErrNoSkill)
	}
	return out, nil
}

func onDisk(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

func problemsOnDisk(dir string, problems []skill.Problem) []skill.Problem {
	out := make([]skill.Problem, len(problems))
	for i, p := range problems {
		p.File = onDisk(dir, p.File)
		out[i] = p
	}
	return out
}

// openSkillDir opens path, a folder or a skill's SKILL.md (then its
// folder), confined: no link out of it is followed. dir is that folder as
// the caller named it, for messages.
func openSkillDir(path string) (fsys *repository.DirFS, dir string, err error) {
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
	fsys, err = repository.NewDirFS(dir)
	return fsys, dir, err
}
