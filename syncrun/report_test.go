package syncrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/skill"
)

// TestErr: a report adds up to nil, ErrPartial or ErrFailed by its
// sources' statuses.
func TestErr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		statuses []Status
		want     error
	}{
		{nil, nil},
		{[]Status{StatusUpdated, StatusUnchanged}, nil},
		{[]Status{StatusUpdated, StatusPartial}, ErrPartial},
		{[]Status{StatusFailed, StatusUnchanged}, ErrPartial},
		{[]Status{StatusFailed, StatusFailed}, ErrFailed},
	} {
		r := NewReport()
		var fetches []FetchReport
		for _, s := range c.statuses {
			r.Sources = append(r.Sources, SourceReport{Status: s})
			fetches = append(fetches, FetchReport{Status: s})
		}
		if err := r.Err(); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%v: Err() = %v, want %v", c.statuses, err, c.want)
		}
		if c.want == ErrPartial && c.statuses[1] == StatusPartial {
			continue // a fetch is never partial
		}
		if err := FetchErr(fetches); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%v: FetchErr() = %v, want %v", c.statuses, err, c.want)
		}
	}
}

// TestSkipped: only errors that leave a skill out of the sync count,
// each skill once; a skill invalid on its own does not.
func TestSkipped(t *testing.T) {
	t.Parallel()
	problems := []skill.Problem{
		{Level: skill.Error, Rule: "file-unreadable", Path: "a"},
		{Level: skill.Error, Rule: "dir-unreadable", Path: "a"},
		{Level: skill.Error, Rule: "source-too-large", Path: "b"},
		{Level: skill.Error, Rule: "source-too-large", Path: "c"},
		{Level: skill.Error, Rule: "frontmatter-missing", Path: "d"},
		{Level: skill.Warning, Rule: "file-unreadable", Path: "e"},
	}
	if skipped, over := Skipped(problems); skipped != 3 || over != 2 {
		t.Errorf("Skipped = %d, %d; want 3, 2", skipped, over)
	}
}

// TestCheckYield: a source that synced and yields nothing is a problem,
// an error when max_source_size left everything out.
func TestCheckYield(t *testing.T) {
	t.Parallel()
	r := NewReport()
	r.CheckYield(SourceReport{Source: "ok", Status: StatusUpdated, Skills: 2}, 10)
	r.CheckYield(SourceReport{Source: "down", Status: StatusFailed}, 10)
	r.CheckYield(SourceReport{Source: "big", Status: StatusUpdated, Skipped: 2, OverSize: 2}, 10)
	r.CheckYield(SourceReport{Source: "empty", Status: StatusUnchanged}, 10)
	r.CheckYield(SourceReport{Source: "unread", Status: StatusPartial, Skipped: 1}, 10)
	r.CheckYield(SourceReport{Source: "archived", Status: StatusUnchanged, Archived: 2}, 10)
	if len(r.Problems) != 2 || r.Problems[0].Source != "big" || r.Problems[0].Rule != "source-too-large" || r.Problems[0].Level != skill.Error ||
		r.Problems[1].Source != "empty" || r.Problems[1].Rule != "source-empty" || r.Problems[1].Level != skill.Warning {
		t.Errorf("problems %+v", r.Problems)
	}
}

// TestSummarizeAndEvents: the changes a sync made are listed by what
// happened, sorted, and each is one audit event naming source/name with
// its hashes.
func TestSummarizeAndEvents(t *testing.T) {
	t.Parallel()
	r := NewReport()
	var h materialize.Hash
	h[0] = 0xab
	r.Add(materialize.Result{Changes: []materialize.Change{
		{Source: "team", Name: "pdf", Op: materialize.Updated, Before: h},
		{Source: "b", Name: "x", Op: materialize.Added, After: h},
		{Source: "a", Name: "y", Op: materialize.Added, After: h},
	}})
	r.Summarize(&layering.Catalog{})
	if !slices.Equal(r.Skills.Added, []string{"a/y", "b/x"}) || !slices.Equal(r.Skills.Updated, []string{"team/pdf"}) || r.Skills.Removed == nil {
		t.Errorf("skills %+v", r.Skills)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := r.Events(now, "daemon")
	if len(events) != 3 {
		t.Fatalf("events %+v", events)
	}
	e := events[0]
	if e.Target != "team/pdf" || e.Op != "updated" || e.Actor != "daemon" || !e.TS.Equal(now) || e.BeforeHash != h.String() || e.AfterHash != (materialize.Hash{}).String() {
		t.Errorf("event %+v", e)
	}
}

// An empty report's lists encode as [], not null: a script that iterates
// .sources[] of a sync with no sources (after --prune-all) fails on null.
func TestNewReportEncodesNoNull(t *testing.T) {
	t.Parallel()
	summarized := NewReport()
	summarized.Summarize(&layering.Catalog{})
	// A report of a sync refused before it began is not summarized.
	for _, r := range []*Report{NewReport(), summarized} {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte("null")) {
			t.Errorf("an empty report encodes a null: %s", data)
		}
	}
}

// TestAddStoppedSkills: the skills a stopped sync did not reach are not
// a problem each (the sync's error says it stopped, once); a skill that
// failed for itself is.
func TestAddStoppedSkills(t *testing.T) {
	t.Parallel()
	r := NewReport()
	var errs []error
	for _, name := range []string{"a", "b", "c"} {
		errs = append(errs, &materialize.SkillError{Source: "team", Skill: name, Err: fmt.Errorf("write: %w", context.Canceled)})
	}
	errs = append(errs, &materialize.SkillError{Source: "team", Skill: "d", Err: errors.New("no space left on device")})
	r.Add(materialize.Result{Errors: errs})
	if len(r.Problems) != 1 || r.Problems[0].Skill != "d" {
		t.Errorf("problems: %+v, want d's alone", r.Problems)
	}
}

// TestCheckYieldOfASelectionThatMatchesNothing: a source whose skills:
// matches none of its skills says so (skill-not-found), and is not also
// said to have no SKILL.md where discovery looks.
func TestCheckYieldOfASelectionThatMatchesNothing(t *testing.T) {
	t.Parallel()
	r := NewReport()
	r.AddProblems([]skill.Problem{{Source: "team", Level: skill.Warning, Rule: "skill-not-found", Message: `skills: "nosuch" matches no skill of this source`}})
	r.CheckYield(SourceReport{Source: "team", Status: StatusUpdated}, 0)
	r.CheckYield(SourceReport{Source: "other", Status: StatusUpdated}, 0)
	var rules []string
	for _, p := range r.Problems {
		rules = append(rules, p.Source+":"+p.Rule)
	}
	if got := strings.Join(rules, " "); got != "team:skill-not-found other:source-empty" {
		t.Errorf("problems: %s", got)
	}
}
