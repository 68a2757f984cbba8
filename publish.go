package skillsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// PublishResult is what Publish wrote.
type PublishResult struct {
	Source string `json:"source"`
	Skill  string `json:"skill"`
	// Revision is the source's revision with the skill in it: a new one,
	// or the current one when the source held exactly these files already.
	Revision string `json:"revision"`
}

// InvalidSkillError is a skill Publish refused: it fails strict
// validation, every warning counting as an error. Each problem's File is a
// path on disk.
type InvalidSkillError struct {
	Source, Skill string
	Problems      []skill.Problem
}

func (e *InvalidSkillError) Error() string {
	return fmt.Sprintf("skill %s is not published to %s: it has %d problems under strict validation", e.Skill, e.Source, len(e.Problems))
}

// Publish writes the skill in the directory dir into the postgres source
// named source, in one transaction, after strict validation; author is
// recorded with the change (the engine's actor when ""). The skill's name
// is the directory's, which its SKILL.md must agree with. Files are read
// through a confined file system: a symbolic link that leads out of dir is
// not published.
//
// A source that is not configured, or is not a postgres source, is a
// *UsageError; a skill that fails validation is an *InvalidSkillError.
// Every daemon listening on the source syncs it as the change commits.
func (e *Engine) Publish(ctx context.Context, dir, source, author string) (PublishResult, error) {
	pub, err := e.writable(source)
	if err != nil {
		return PublishResult{}, err
	}
	defer closeRepository(pub)
	fsys, _, err := repository.OpenSkillDir(dir)
	if err != nil {
		return PublishResult{}, fmt.Errorf("publish %s: %w", dir, err)
	}
	name := filepath.Base(fsys.Dir())
	if author == "" {
		author = e.actor
	}
	// The source lists and checks the files itself, strictly.
	rev, err := pub.PublishSkill(ctx, name, fsys, author)
	var invalid *repository.InvalidSkillError
	if errors.As(err, &invalid) {
		// Problems name files as the source would hold them, name/path:
		// show where they are on disk.
		problems := repository.ProblemsOnDisk(filepath.Dir(fsys.Dir()), invalid.Problems)
		for i := range problems {
			problems[i].Source = ""
		}
		return PublishResult{}, &InvalidSkillError{Source: source, Skill: name, Problems: problems}
	}
	if err != nil {
		return PublishResult{}, err
	}
	return PublishResult{Source: source, Skill: name, Revision: string(rev)}, nil
}

// skillWriter is a source that takes a skill in as it is, in one
// transaction and without a review: a database. A git source takes a
// skill through the promotion gate's review branch instead.
type skillWriter interface {
	repository.Repository
	PublishSkill(ctx context.Context, name string, files fs.FS, author string) (repository.Revision, error)
}

// writable opens the configured source name for writing: it must be a
// skillWriter.
func (e *Engine) writable(name string) (skillWriter, error) {
	s, ok := e.source(name)
	if !ok {
		return nil, usageErrorf("no source named %q in the config %s", name, e.cfg.File)
	}
	repo, err := e.open(s, "")
	if err != nil {
		return nil, err
	}
	w, ok := repo.(skillWriter)
	if !ok {
		closeRepository(repo)
		return nil, usageErrorf("source %s is a %s source: only postgres sources can be published to (promote a draft to a git source)", name, s.Kind)
	}
	return w, nil
}

// pushSources returns the config's sources that announce their changes
// (a database that NOTIFYs: a repository.Listener), which a daemon
// listens to. Opening a source reads nothing. A source that does not open
// is kept, so that Listen reports why.
func (e *Engine) pushSources() []config.Source {
	var out []config.Source
	for _, s := range e.cfg.Sources {
		r, err := e.open(s, "")
		if err != nil {
			out = append(out, s)
			continue
		}
		if _, ok := r.(repository.Listener); ok {
			out = append(out, s)
		}
		closeRepository(r)
	}
	return out
}

// PushSources names the sources that announce their changes as they
// happen; Listen listens to them, and a daemon syncs each on its own when
// it changes.
func (e *Engine) PushSources() []string {
	var names []string
	for _, s := range e.pushSources() {
		names = append(names, s.Name)
	}
	return names
}
