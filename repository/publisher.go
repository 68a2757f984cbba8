package repository

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/skillsync/skillsync/skill"
)

// ErrNonFastForward is a direct publish whose base is no longer the tip
// of the tracked branch: the remote moved on, and pushing would drop what
// others pushed.
var ErrNonFastForward = errors.New("not a fast-forward: the remote branch moved on")

// ErrBranchExists is a publish to a review branch the remote already has.
var ErrBranchExists = errors.New("the branch already exists on the remote")

// ErrNothingToPublish is a skill the base commit already holds exactly.
var ErrNothingToPublish = errors.New("nothing to publish: the repository already holds the skill as it is")

// Publisher is a Repository that takes a skill back: it commits the
// skill's files into the source and sends the commit to the remote.
type Publisher interface {
	Repository
	Publish(ctx context.Context, req PublishRequest) (Published, error)
}

// PublishRequest is one skill to commit and push.
type PublishRequest struct {
	// Name is the skill's name: its folder under the source's path, unless
	// the base commit has a skill of that name elsewhere, which is then
	// replaced where it is.
	Name string
	// Files holds the skill's regular files, List names them (in any
	// order); nothing else is committed.
	Files fs.FS
	List  []skill.File
	// Base is the commit to build on, the revision the workspace has; ""
	// is the tip of the tracked ref.
	Base Revision
	// Branch is the branch to push a new commit to: a new review branch,
	// never one the remote has. "" is skillsync/<name>, or with Direct the
	// tracked branch.
	Branch string
	// Direct pushes to the tracked branch (ref:, or the remote's default
	// branch). It is refused with ErrNonFastForward when the tip is not
	// Base.
	Direct bool
	// Message is the whole commit message.
	Message string
	// Author is the commit's author and committer; When its time.
	Author, Email string
	When          time.Time
	// Edit, when set, makes the commit change only the SKILL.md of the
	// skill Name as the base holds it, to what Edit returns for its
	// content; every other file of the skill stays as the base has it.
	// Files and List are unused then. A base without the skill is an
	// error: there is nothing to edit.
	Edit func(skillMD []byte) ([]byte, error)
	// Archive, when set, makes the commit move these skills (by name)
	// into .archive/<their folder> instead of writing Name's files: a
	// reversible retirement. Files and List are unused then, and Branch
	// must be given unless Direct.
	Archive []string
}

// Published is what a publish did.
type Published struct {
	// Branch is the branch pushed, without refs/heads/.
	Branch string
	Commit Revision
	// Base is the commit the new one builds on.
	Base Revision
	// Path is the skill's folder in the repository.
	Path   string
	Direct bool
}

// InvalidSkillError is returned by a Publisher for a skill that fails strict
// validation: every warning counts as an error.
type InvalidSkillError struct {
	Source, Skill string
	Problems      []skill.Problem
}

func (e *InvalidSkillError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message + " (" + p.Rule + ")"
	}
	return fmt.Sprintf("skill %s is not published to %s: %s", e.Skill, e.Source, strings.Join(msgs, "; "))
}
