package drafts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// SkillWriter is a source that takes a skill in as it is, in one
// transaction and without a review: a database. A git source takes a
// skill through the promotion gate's review branch instead.
type SkillWriter interface {
	repository.Repository
	PublishSkill(ctx context.Context, name string, files fs.FS, author string) (repository.Revision, error)
}

// PublishResult is what Publish wrote.
type PublishResult struct {
	Source string `json:"source"`
	Skill  string `json:"skill"`
	// Revision is the source's revision with the skill in it: a new one,
	// or the current one when the source held exactly these files already.
	Revision string `json:"revision"`
	// Ignored is what git ignores in the directory: it was not published,
	// as a sync of the directory would not take it either.
	Ignored Ignored `json:"ignored,omitzero"`
}

// InvalidSkillError is a skill Publish refused: it fails strict
// validation, every warning counting as an error. Each problem's File is a
// path on disk.
type InvalidSkillError struct {
	Source, Skill string
	Problems      []skill.Problem
}

func (e *InvalidSkillError) Error() string {
	return fmt.Sprintf("skill %s is not published to %s: it has %d %s under strict validation", e.Skill, e.Source, len(e.Problems), plural(len(e.Problems), "problem"))
}

// Publish writes the skill in the directory dir into w, the source named
// source, after strict validation; author is recorded with the change.
// The skill's name is the directory's, which its SKILL.md must agree
// with. Files are read through a confined file system: a symbolic link
// that leads out of dir is not published. A skill that fails validation
// is an *InvalidSkillError. It is PublishIn with the process's
// environment.
func Publish(ctx context.Context, w SkillWriter, dir, source, author string) (PublishResult, error) {
	return PublishIn(ctx, w, dir, source, author, hostenv.Env{})
}

// PublishIn is Publish with env as the host whose git config says what
// git ignores: a dir in a git work tree is read as a sync reads it
// (repository.GitView), so what git ignores there (a .env,
// node_modules/) is never published, and the result's Ignored names it.
func PublishIn(ctx context.Context, w SkillWriter, dir, source, author string, env hostenv.Env) (PublishResult, error) {
	return publishIn(ctx, w, dir, source, author, env, nil)
}

// publishIn is PublishIn; a dir below one of layers (the local layers'
// folders) is read as the sync of its layer reads it
// (repository.OpenGitViewIn).
func publishIn(ctx context.Context, w SkillWriter, dir, source, author string, env hostenv.Env, layers []string) (PublishResult, error) {
	_, folder, err := repository.OpenSkillDir(dir)
	if err != nil {
		return PublishResult{}, fmt.Errorf("publish %s: %w", dir, err)
	}
	fsys, err := repository.OpenGitViewIn(folder, layers, env)
	if err != nil {
		return PublishResult{}, fmt.Errorf("publish %s: %w", dir, err)
	}
	name := filepath.Base(fsys.Dir())
	var left Ignored
	if left.Names, left.More, err = repository.Ignored(ctx, fsys); err != nil {
		return PublishResult{}, fmt.Errorf("publish %s: list what git ignores in %s: %w", name, fsys.Dir(), err)
	}
	left.Whole = repository.GitIgnoresWhole(fsys)
	// The source lists and checks the files itself, strictly.
	rev, err := w.PublishSkill(ctx, name, fsys, author)
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
	return PublishResult{Source: source, Skill: name, Revision: string(rev), Ignored: left}, nil
}

// Publish writes the skill in the directory dir into the configured
// postgres source named source, in one transaction, after strict
// validation (Publish); author is recorded with the change (g.Actor when
// ""). A source that is not configured, or cannot take a skill as it is
// (not a SkillWriter), is a *RequestError; a skill that fails validation
// is an *InvalidSkillError. Every daemon listening on the source syncs it
// as the change commits.
func (g *Gate) Publish(ctx context.Context, dir, source, author string) (PublishResult, error) {
	t, err := g.OpenSource(source)
	if err != nil {
		return PublishResult{}, err
	}
	if t == nil {
		return PublishResult{}, requestErrorf("no source named %q in the config %s", source, g.Policy.Config)
	}
	defer repository.Close(t.Repository)
	w, ok := t.Repository.(SkillWriter)
	if !ok {
		return PublishResult{}, requestErrorf("source %s is a %s source: only postgres sources can be published to (promote a draft to a git source)", source, t.Kind)
	}
	return publishIn(ctx, w, dir, source, cmp.Or(author, g.Actor), g.Folder.Env, g.layers())
}
