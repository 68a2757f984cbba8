package skillsync

import (
	"cmp"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// SourceReport is one source in a sync report.
type SourceReport struct {
	Source   string          `json:"source"`
	Type     repository.Kind `json:"type"`
	Revision string          `json:"revision"`
	Status   Status          `json:"status"`
	Error    string          `json:"error"`
	Skills   int             `json:"skills"`
	// fetch is how long the source's fetch took; brought is the size of
	// the skills the sync wrote into the cache from it. The daemon's
	// metrics count them.
	fetch   time.Duration
	brought int64
	// skipped counts the skills the source has that this sync could not
	// bring, overSize those of them past max_source_size.
	skipped, overSize int
}

// SkillChanges lists skills by what happened to them, as source/name.
type SkillChanges struct {
	Added   []string `json:"added"`
	Updated []string `json:"updated"`
	Removed []string `json:"removed"`
}

// ProblemReport is a problem as sync reports it.
type ProblemReport struct {
	Source  string      `json:"source"`
	Skill   string      `json:"skill"`
	Path    string      `json:"path"`
	Level   skill.Level `json:"level"`
	Rule    string      `json:"rule"`
	Message string      `json:"message"`
}

// SyncReport is what a sync did.
type SyncReport struct {
	Sources  []SourceReport             `json:"sources"`
	Skills   SkillChanges               `json:"skills"`
	Files    materialize.Stats          `json:"files"`
	Targets  []materialize.TargetReport `json:"targets"`
	Problems []ProblemReport            `json:"problems"`
	// Shadowed names the skills of which more than one source has a copy;
	// show NAME says which won and why.
	Shadowed []string `json:"shadowed"`
	// Duplicates are source/name of skills a source has twice; the copy
	// whose path sorts first is the one synced.
	Duplicates []string `json:"duplicates"`
	// Changes carries the hashes before and after, for the audit log.
	Changes []materialize.Change `json:"-"`
	// Warnings are things the user should know that changed nothing.
	Warnings []string `json:"-"`
}

func newSyncReport() *SyncReport {
	return &SyncReport{Targets: []materialize.TargetReport{}, Problems: []ProblemReport{}, Shadowed: []string{}, Duplicates: []string{}}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Failed counts the sources that failed.
func (r *SyncReport) Failed() int {
	n := 0
	for _, s := range r.Sources {
		if s.Status == StatusFailed {
			n++
		}
	}
	return n
}

// err is ErrFailed when every source failed, ErrPartial when some failed
// or kept some skills at their last good files, nil otherwise.
func (r *SyncReport) err() error {
	failed, partial := r.Failed(), 0
	for _, s := range r.Sources {
		if s.Status == StatusPartial {
			partial++
		}
	}
	switch {
	case failed == 0 && partial == 0:
		return nil
	case failed == len(r.Sources):
		return fmt.Errorf("%w (%d of %d)", ErrFailed, failed, len(r.Sources))
	default:
		return fmt.Errorf("%w (%d failed, %d partly synced, of %d)", ErrPartial, failed, partial, len(r.Sources))
	}
}

// unwritable reports whether errs hold a skill that could not be
// written, which leaves its source partly synced.
func unwritable(errs []error) bool {
	for _, err := range errs {
		var se *materialize.SkillError
		if !lock.IsRefused(err) && errors.As(err, &se) {
			return true
		}
	}
	return false
}

// add takes in what the cache did to one source: its changes, its
// warnings, and each skill it could not write as a problem. A skill a
// frozen sync refused is in the frozen diff already.
func (r *SyncReport) add(res materialize.Result) {
	r.Changes = append(r.Changes, res.Changes...)
	r.Warnings = append(r.Warnings, res.Warnings...)
	for _, err := range res.Errors {
		var se *materialize.SkillError
		switch {
		case lock.IsRefused(err):
		case errors.As(err, &se):
			r.Problems = append(r.Problems, ProblemReport{Source: se.Source, Skill: se.Skill, Path: se.Path, Level: skill.Error,
				Rule: "skill-unwritable", Message: err.Error() + "; it keeps its last good files"})
		default:
			r.Warnings = append(r.Warnings, err.Error())
		}
	}
}

func (r *SyncReport) addProblems(problems []skill.Problem) {
	for _, p := range problems {
		r.Problems = append(r.Problems, ProblemReport{Source: p.Source, Skill: p.Skill, Path: cmp.Or(p.File, p.Path), Level: p.Level, Rule: p.Rule, Message: p.Message})
	}
}

// summarize fills Skills from Changes and Shadowed from cat, sorted.
func (r *SyncReport) summarize(cat *layering.Catalog) {
	r.Shadowed = []string{}
	for _, w := range cat.Winners {
		if len(w.Shadowed) > 0 {
			r.Shadowed = append(r.Shadowed, w.Skill.Name)
		}
	}
	r.Duplicates = orEmpty(r.Duplicates)
	sort.Strings(r.Duplicates)
	r.Skills = SkillChanges{Added: []string{}, Updated: []string{}, Removed: []string{}}
	for _, c := range r.Changes {
		name := c.Source + "/" + c.Name
		switch c.Op {
		case materialize.Added:
			r.Skills.Added = append(r.Skills.Added, name)
		case materialize.Updated:
			r.Skills.Updated = append(r.Skills.Updated, name)
		case materialize.Removed:
			r.Skills.Removed = append(r.Skills.Removed, name)
		}
	}
	sort.Strings(r.Skills.Added)
	sort.Strings(r.Skills.Updated)
	sort.Strings(r.Skills.Removed)
}
