package skillsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
)

// Read opens file of the catalog skill name: its SKILL.md when file is
// "". file is relative to the skill's directory and must stay inside it:
// "..", absolute paths and symbolic links that lead out of the skill are
// refused. A hidden skill is a *HiddenError. The caller closes the file.
func (e *Engine) Read(ctx context.Context, name, file string) (fs.File, *layering.Winner, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	w, err := e.find(cat, name, false)
	if err != nil {
		return nil, nil, err
	}
	f, err := openSkillFile(w, file)
	return f, w, err
}

// openSkillFile opens file of the winner's skill, confined to the skill's
// own directory; see Engine.Read.
func openSkillFile(w *layering.Winner, file string) (fs.File, error) {
	if file == "" {
		file = w.Skill.File
	}
	rel, err := skillRelative(file)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", w.Skill.Name, file, err)
	}
	fsys := w.Skill.Files
	if w.Dir != "" {
		// A source-wide link into another skill is fine for discovery, but
		// read promises this skill's files.
		dfs, err := repository.NewDirFS(w.Dir)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", w.Skill.Name, err)
		}
		fsys = dfs
	}
	f, err := fsys.Open(rel)
	if err != nil {
		return nil, readError(w.Skill.Name, file, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, readError(w.Skill.Name, file, err)
	}
	if info.IsDir() {
		f.Close()
		return nil, fmt.Errorf("read %s %s: is a directory; skillsync show %s lists the files", w.Skill.Name, file, w.Skill.Name)
	}
	return f, nil
}

// skillRelative checks that file names a path inside a skill and returns
// it in io/fs form.
func skillRelative(file string) (string, error) {
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
	case errors.Is(err, repository.ErrOutside):
		return fmt.Errorf("read %s %s: a symbolic link leads out of the skill; refused", name, file)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s %s: no such file in the skill; skillsync show %s lists the files", name, file, name)
	}
	return fmt.Errorf("read %s %s: %w", name, file, err)
}
