package skillsync

import (
	"context"
	"io/fs"

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
	if file == "" {
		file = w.Skill.File
	}
	f, err := repository.OpenSkillFile(w.Skill.Name, file, w.Dir, w.Skill.Files)
	return f, w, err
}
