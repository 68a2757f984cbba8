// Package syncrun holds the mechanics of one sync below the Engine: the
// report of what it did source by source (status, skills changed,
// problems) and the error that adds up to, and the fetch fan-out that
// brings sources with a local copy up to date, jobs at a time. The root's
// sync.go tells the story of a sync; this package keeps its books.
package syncrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/lock"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// ErrPartial is returned by a sync, with its report, when some sources
// failed, or some skills could not be written, and kept their last good
// files while the rest was synced.
var ErrPartial = errors.New("some sources or skills failed and kept their last good files")

// ErrFailed is returned by a sync, with its report, when every source
// failed.
var ErrFailed = errors.New("every source failed and kept its last good files")

// Status is how a source fared in a fetch or a sync.
type Status string

// The statuses of a source.
const (
	StatusUpdated   Status = "updated"
	StatusUnchanged Status = "unchanged"
	StatusFailed    Status = "failed"
	// StatusPartial is a source synced but for some skills that could
	// not be written, which keep their last good files.
	StatusPartial Status = "partial"
)

// SourceReport is one source in a sync report.
type SourceReport struct {
	Source   string          `json:"source"`
	Type     repository.Kind `json:"type"`
	Revision string          `json:"revision"`
	Status   Status          `json:"status"`
	Error    string          `json:"error"`
	Skills   int             `json:"skills"`
	// FetchTime is how long the source's fetch took; Brought is the size
	// of the skills the sync wrote into the cache from it. The daemon's
	// metrics count them.
	FetchTime time.Duration `json:"-"`
	Brought   int64         `json:"-"`
	// Skipped counts the skills the source has that this sync could not
	// bring, OverSize those of them past max_source_size.
	Skipped, OverSize int `json:"-"`
	// Unwritten counts the skills the source has that the cache could not
	// write.
	Unwritten int `json:"-"`
	// Archived counts the skills the source has that the cache leaves out
	// as archived.
	Archived int `json:"-"`
	// LeftOut is what a .gitignore rule left out of the source's listing
	// (a folder, a SKILL.md, with the rule), "" for nothing: when the
	// source yields no skills, that is why (CheckYield).
	LeftOut string `json:"-"`
}

// SkillChanges lists skills by what happened to them, as source/name.
type SkillChanges struct {
	Added   []string `json:"added"`
	Updated []string `json:"updated"`
	Removed []string `json:"removed"`
	// Repaired are skills whose content did not change and whose cached
	// files, which did not match their records, were written again.
	Repaired []string `json:"repaired"`
}

// ProblemReport is a problem as sync reports it.
type ProblemReport struct {
	Source  string      `json:"source"`
	Skill   string      `json:"skill"`
	Path    string      `json:"path"`
	Level   skill.Level `json:"level"`
	Rule    string      `json:"rule"`
	Message string      `json:"message"`
	// Line is the line of Path the problem is on, where known.
	Line int `json:"line,omitempty"`
}

// Report is what a sync did.
type Report struct {
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
	// Frozen are the ways the lock and what a sync --frozen found
	// disagree, one line each (lock.FrozenError); that sync then fails.
	Frozen []string `json:"frozen"`
	// Changes carries the hashes before and after, for the audit log.
	Changes []materialize.Change `json:"-"`
	// Warnings are things the user should know that changed nothing.
	Warnings []string `json:"-"`
}

// NewReport returns an empty report whose lists encode as [], not null.
func NewReport() *Report {
	return &Report{Sources: []SourceReport{}, Skills: SkillChanges{Added: []string{}, Updated: []string{}, Removed: []string{}, Repaired: []string{}}, Targets: []materialize.TargetReport{}, Problems: []ProblemReport{}, Shadowed: []string{}, Duplicates: []string{}, Frozen: []string{}}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Failed counts the sources that failed.
func (r *Report) Failed() int {
	n := 0
	for _, s := range r.Sources {
		if s.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Err is ErrFailed when every source failed, ErrPartial when some failed
// or kept some skills at their last good files, nil otherwise.
func (r *Report) Err() error {
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

// Unwritable reports whether errs hold a skill that could not be
// written, which leaves its source partly synced.
func Unwritable(errs []error) bool { return unwritten(errs) > 0 }

// unwritten counts the skills errs say could not be written.
func unwritten(errs []error) int {
	n := 0
	for _, err := range errs {
		var se *materialize.SkillError
		if !lock.IsRefused(err) && errors.As(err, &se) {
			n++
		}
	}
	return n
}

// Add takes in what the cache did: its changes, its warnings, and each
// skill it could not write as a problem. A skill a frozen sync refused is
// in the frozen diff already.
func (r *Report) Add(res materialize.Result) { r.add(res, nil) }

// add is Add for one source, cached saying whether the cache has a
// version of a skill, which one that could not be written keeps (nil:
// each has). Skills not written for a full disk are one problem, with
// the fix.
func (r *Report) add(res materialize.Result, cached func(skill string) bool) {
	if cached == nil {
		cached = func(string) bool { return true }
	}
	r.Changes = append(r.Changes, res.Changes...)
	r.Warnings = append(r.Warnings, res.Warnings...)
	var full []*materialize.SkillError
	for _, err := range res.Errors {
		var se *materialize.SkillError
		switch {
		case lock.IsRefused(err):
		case errors.Is(err, context.Canceled):
			// The sync was stopped: its error says so once, not once for
			// every skill it did not reach.
		case errors.As(err, &se) && platform.DiskFull(err):
			full = append(full, se)
		case errors.As(err, &se):
			r.Problems = append(r.Problems, ProblemReport{Source: se.Source, Skill: se.Skill, Path: se.Path, Level: skill.Error,
				Rule: "skill-unwritable", Message: err.Error() + keeps(cached(se.Skill))})
		default:
			r.Warnings = append(r.Warnings, err.Error())
		}
	}
	if len(full) > 0 {
		se := full[0]
		r.Problems = append(r.Problems, ProblemReport{Source: se.Source, Level: skill.Error, Rule: "skill-unwritable",
			Message: fmt.Sprintf("%d skills of source %s could not be written, the disk being full (%v): free space there and sync again; each skill %s",
				len(full), se.Source, se, strings.TrimPrefix(keeps(cached(se.Skill)), "; it "))})
	}
}

// keeps says what a skill that could not be written keeps: its last
// good files when the cache has them.
func keeps(cached bool) string {
	if cached {
		return "; it keeps its last good files"
	}
	return "; it is not in the cache until a sync writes it"
}

// AddProblems takes in what discovery found wrong in a source.
func (r *Report) AddProblems(problems []skill.Problem) {
	for _, p := range problems {
		r.Problems = append(r.Problems, ProblemReport{Source: p.Source, Skill: p.Skill, Path: cmp.Or(p.File, p.Path), Level: p.Level, Rule: p.Rule, Message: p.Message, Line: p.Line})
	}
}

// AddDuplicates takes in the skills a source has twice, each past the
// copy whose path sorts first.
func (r *Report) AddDuplicates(name string, dups []skill.Skill) {
	for _, d := range dups {
		r.Duplicates = append(r.Duplicates, name+"/"+d.Name)
	}
	r.AddProblems(layering.DuplicateProblems(name, dups))
}

// CheckYield reports a source that synced and yields no skills: all of
// them past limit (max_source_size), or none where discovery looks.
func (r *Report) CheckYield(rep SourceReport, limit int64) {
	name := rep.Source
	switch {
	case rep.Status == StatusFailed || rep.Skills > 0 || rep.Archived > 0 || rep.Unwritten > 0:
	case rep.OverSize > 0:
		r.Problems = append(r.Problems, ProblemReport{Source: name, Level: skill.Error, Rule: "source-too-large",
			Message: fmt.Sprintf("source %s yields no skills: all %d of them are skipped, since they add up to more than max_source_size %d bytes; raise max_source_size or pick fewer with skills:", name, rep.OverSize, limit)})
	case slices.ContainsFunc(r.Problems, func(p ProblemReport) bool { return p.Source == name && p.Rule == "skill-not-found" }):
		// Its skills: matched none of the skills it has, and says so.
	case rep.Skipped == 0 && rep.LeftOut != "":
		r.Problems = append(r.Problems, ProblemReport{Source: name, Level: skill.Warning, Rule: "source-empty",
			Message: fmt.Sprintf("source %s yields no skills: its .gitignore rules leave out what discovery would read, as %s; change that rule (or those beside it) to have the skills synced", name, rep.LeftOut)})
	case rep.Skipped == 0:
		r.Problems = append(r.Problems, ProblemReport{Source: name, Level: skill.Warning, Rule: "source-empty",
			Message: fmt.Sprintf("source %s yields no skills: no valid SKILL.md where discovery looks; set path: to the folder that holds them", name)})
	}
}

// Skipped counts the skills problems say the source has and this sync
// could not bring: past max_source_size (over counts those), or not read
// whole (a file or folder that could not be read, a content that did not
// match). Such a source is partly synced, whatever its kind. A skill not
// read keeps what the cache has of it (materialize.Held): a read that
// failed says nothing of the skill. One past the limit is left out, as
// the limit asks, on every machine alike. A skill that is invalid or too
// large on its own is the skill's fault, not the sync's; the cached skill
// whose new version it is keeps its last good copy (Run.keepInvalid),
// which Materialize counts apart.
func Skipped(problems []skill.Problem) (skipped, over int) {
	seen := map[string]bool{}
	for _, p := range problems {
		if p.Level != skill.Error || seen[p.Path] {
			continue
		}
		switch {
		case p.Rule == "source-too-large":
			over++
		case materialize.Unreadable(p):
		default:
			continue
		}
		seen[p.Path] = true
		skipped++
	}
	return skipped, over
}

// Reached is the revision each source that did not fail reached, as the
// lock records it (lock.FromCache).
func (r *Report) Reached() map[string]string {
	reached := map[string]string{}
	for _, s := range r.Sources {
		if s.Status != StatusFailed {
			reached[s.Source] = s.Revision
		}
	}
	return reached
}

// Events are the report's changes as the audit log records them, each
// made at now by actor.
func (r *Report) Events(now time.Time, actor string) []curator.Event {
	var events []curator.Event
	for _, c := range r.Changes {
		events = append(events, curator.Event{TS: now, Actor: actor, Op: string(c.Op), Target: c.Source + "/" + c.Name,
			BeforeHash: c.Before.String(), AfterHash: c.After.String()})
	}
	return events
}

// Summarize fills Skills from Changes and Shadowed from cat, sorted, and
// takes in cat's problems of the layers read in place (global,
// workspace, user): every sync reads them again, for its catalog, and an
// invalid skill there reaches no target, so the sync says why, each
// time. Like a new upstream skill that is invalid, it is a problem of
// that skill, not a partial sync: there is no last good copy to keep.
// The marketplace sources' problems are the sync's own already.
func (r *Report) Summarize(cat *layering.Catalog) {
	marketplace := make(map[string]bool, len(r.Sources))
	for _, s := range r.Sources {
		marketplace[s.Source] = true
	}
	for _, p := range cat.Problems {
		if !marketplace[p.Source] {
			r.AddProblems([]skill.Problem{p})
		}
	}
	r.Shadowed = []string{}
	for _, w := range cat.Winners {
		if len(w.Shadowed) > 0 {
			r.Shadowed = append(r.Shadowed, w.Skill.Name)
		}
	}
	r.Duplicates = orEmpty(r.Duplicates)
	sort.Strings(r.Duplicates)
	r.Skills = SkillChanges{Added: []string{}, Updated: []string{}, Removed: []string{}, Repaired: []string{}}
	for _, c := range r.Changes {
		name := c.Source + "/" + c.Name
		switch c.Op {
		case materialize.Added:
			r.Skills.Added = append(r.Skills.Added, name)
		case materialize.Updated:
			r.Skills.Updated = append(r.Skills.Updated, name)
		case materialize.Removed:
			r.Skills.Removed = append(r.Skills.Removed, name)
		case materialize.Repaired:
			r.Skills.Repaired = append(r.Skills.Repaired, name)
		}
	}
	sort.Strings(r.Skills.Repaired)
	sort.Strings(r.Skills.Added)
	sort.Strings(r.Skills.Updated)
	sort.Strings(r.Skills.Removed)
}
