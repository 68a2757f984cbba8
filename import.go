package skillsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/agent/claude"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/layering"
)

// ImportReport is what an import of an agent's records did.
type ImportReport struct {
	Agent string `json:"agent"`
	// Files is how many records had something new; Rewritten how many of
	// them were read again from the start.
	Files     int `json:"files"`
	Rewritten int `json:"rewritten"`
	// Uses and Views were recorded.
	Uses  int `json:"uses"`
	Views int `json:"views"`
	// Unknown events named no visible skill of the catalog (a plugin's
	// skill, a personal one, a SKILL.md outside the workspace's targets);
	// UnknownNames lists the first of them, sorted.
	Unknown      int      `json:"unknown"`
	UnknownNames []string `json:"unknown_names"`
	// Hooked events were recorded already, as they happened, by the
	// agent's hook; they are not counted again.
	Hooked int `json:"hooked"`
	// Malformed and TooLong lines were skipped; Before events were older
	// than --since.
	Malformed int `json:"malformed"`
	TooLong   int `json:"too_long"`
	Before    int `json:"before_since"`
	// Unreadable records were passed over this time, with why.
	Unreadable []string `json:"unreadable"`
	// Reactivated are the stale skills a recorded use made active again.
	Reactivated []string `json:"reactivated"`
}

// hookedKeep is how long a call a hook recorded waits in the journal for
// the import that would count it again.
const hookedKeep = 30 * 24 * time.Hour

func (e *Engine) hooked() agent.Hooked {
	return agent.Hooked{Path: e.layout.HookedFile(), Keep: hookedKeep}
}

// maxUnknownNames bounds the unknown names a report lists.
const maxUnknownNames = 20

// importLockWait bounds how long an import waits for another.
const importLockWait = 2 * time.Minute

// ImportUsage records the skill uses and views an agent's own records
// hold (importer: e.g. Claude Code's transcripts), each at the time the
// record gives, through curator.FromImport. A use names a skill; a view is
// a read of the SKILL.md of a visible skill, where the catalog has it or
// in one of the targets. Events naming anything else are counted as
// unknown. Events before since (zero: none) are passed over for good.
//
// Imports of one workspace serialize on a lock, and each remembers per
// record how far it read (skills/.imported.json), so importing twice
// counts nothing twice. The marks are saved after the events are recorded:
// a crash between the two counts those events again on the next import,
// which moves no time.
func (e *Engine) ImportUsage(ctx context.Context, imp agent.Importer, since time.Time) (*ImportReport, error) {
	statePath := e.layout.ImportedFile()
	if err := atomicfile.MkdirNoFollow(filepath.Dir(statePath), 0o755); err != nil {
		return nil, fmt.Errorf("import usage from %s: %w", imp.Name(), err)
	}
	lock, err := flock.Acquire(ctx, statePath+".lock", importLockWait)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", statePath, err)
	}
	defer lock.Close()
	state, err := agent.LoadState(statePath)
	if err != nil {
		return nil, err
	}
	batch, err := imp.Import(ctx, since, state.Agents[imp.Name()])
	if err != nil {
		return nil, fmt.Errorf("import usage from %s: %w", imp.Name(), err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	report := &ImportReport{Agent: imp.Name(), Files: batch.Files, Rewritten: batch.Rewritten, Malformed: batch.Malformed,
		TooLong: batch.TooLong, Before: batch.Before, UnknownNames: []string{}, Reactivated: []string{},
		Unreadable: append([]string{}, batch.Unreadable...)}
	var ids []string
	for _, ev := range batch.Events {
		if ev.ID != "" {
			ids = append(ids, ev.ID)
		}
	}
	// Claimed before the uses are recorded: should recording fail, the
	// next import counts the claimed calls again, which moves no time.
	hooked, err := e.hooked().Claim(ctx, imp.Name(), ids, e.now())
	if err != nil {
		return nil, err
	}
	skills := e.eventSkills(cat)
	unknown := map[string]bool{}
	var uses []curator.Use
	for _, ev := range batch.Events {
		if ev.ID != "" && hooked[ev.ID] {
			report.Hooked++
			continue
		}
		c, ok := skills.copyOf(ev)
		if !ok {
			report.Unknown++
			unknown[cmp.Or(ev.Skill, ev.Path)] = true
			continue
		}
		if ev.View {
			report.Views++
		} else {
			report.Uses++
		}
		uses = append(uses, curator.Use{Copy: c, View: ev.View, From: curator.FromImport, At: ev.At, Actor: e.actor})
	}
	for name := range unknown {
		report.UnknownNames = append(report.UnknownNames, name)
	}
	sort.Strings(report.UnknownNames)
	if len(report.UnknownNames) > maxUnknownNames {
		report.UnknownNames = report.UnknownNames[:maxUnknownNames]
	}
	store := e.Usage()
	store.Resolve = e.resolverFrom(cat)
	re, err := store.RecordAll(ctx, uses)
	if err != nil {
		return nil, err
	}
	for _, c := range re {
		report.Reactivated = append(report.Reactivated, c.Name)
	}
	state.Agents[imp.Name()] = batch.Marks
	if err := state.Save(statePath); err != nil {
		return report, fmt.Errorf("save how far the import read (the events are recorded; the next import counts them again): %w", err)
	}
	return report, nil
}

// RecordHook records one event the hook of the named agent reported as it
// happened, through curator.FromHook, at the event's time or now: a use of
// the skill it names or a view of the SKILL.md it read. It returns the
// skill's name, or an *UnknownSkillError when the event names no visible
// skill of the catalog. The call's id goes to the hooked journal, so an
// import of the agent's records does not count it again; a journal that
// cannot be written is a warning, the use is counted.
func (e *Engine) RecordHook(ctx context.Context, agentName string, ev agent.Event) (string, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return "", err
	}
	c, ok := e.eventSkills(cat).copyOf(ev)
	if !ok {
		if ev.Skill != "" {
			return "", &UnknownSkillError{Name: ev.Skill, Near: layering.Nearest(cat.Visible(), ev.Skill, 3)}
		}
		return "", &UnknownSkillError{Name: ev.Path}
	}
	at := ev.At
	if at.IsZero() {
		at = e.now()
	}
	if _, err := e.Usage().Record(ctx, curator.Use{Copy: c, View: ev.View, From: curator.FromHook, At: at, Actor: e.actor}); err != nil {
		return "", err
	}
	if err := e.hooked().Add(ctx, agentName, ev.ID, at); err != nil {
		e.warnf("recorded the use of %s; an import of %s's records may count it again: %v", c.Name, agentName, err)
	}
	return c.Name, nil
}

// eventSkills maps what agents report to the copies of the visible
// winners of one catalog.
type eventSkills struct {
	e   *Engine
	cat *layering.Catalog
	// paths maps each SKILL.md an agent may read (where the catalog has
	// the skill, and in every target) to its winner; made on first use.
	paths map[string]*layering.Winner
}

func (e *Engine) eventSkills(cat *layering.Catalog) *eventSkills {
	return &eventSkills{e: e, cat: cat}
}

// copyOf returns the copy an event names: by name for a use of the skill
// tool, by the path of its SKILL.md for a read. Hidden and archived skills
// are no skills here: they are in no target.
func (s *eventSkills) copyOf(ev agent.Event) (curator.Copy, bool) {
	var w *layering.Winner
	if ev.Skill != "" {
		w, _ = s.cat.Lookup(ev.Skill)
	} else if ev.Path != "" {
		if s.paths == nil {
			s.paths = s.skillFiles()
		}
		w = s.paths[filepath.Clean(ev.Path)]
	}
	if w == nil || w.Hidden || w.State == layering.Archived {
		return curator.Copy{}, false
	}
	return s.e.copyOf(&w.Entry)
}

func (s *eventSkills) skillFiles() map[string]*layering.Winner {
	out := map[string]*layering.Winner{}
	for _, w := range s.cat.Visible() {
		file := cmp.Or(w.Skill.File, "SKILL.md")
		if loc := w.Location(); loc != "" {
			out[filepath.Clean(loc)] = w
		}
		for _, t := range s.e.cfg.Targets {
			out[filepath.Join(t.Dir, w.Skill.Name, file)] = w
		}
	}
	return out
}

// ImporterNames returns the agents whose records Engine.Importer reads.
func ImporterNames() []string { return []string{claude.Name} }

// Importer returns the importer of the named agent's records of this
// workspace: "claude" reads Claude Code's session transcripts under
// $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects.
func (e *Engine) Importer(name string) (agent.Importer, error) {
	switch name {
	case claude.Name:
		projects, err := claude.ProjectsDir(e.env)
		if err != nil {
			return nil, err
		}
		return claude.New(e.cfg.Workspace, projects), nil
	}
	return nil, usageErrorf("no importer for agent %q; the agents known are %s", name, strings.Join(ImporterNames(), ", "))
}

// ImportAll imports the records of every agent ImporterNames knows, as
// ImportUsage does, and returns a report per agent. An agent that fails
// does not stop the others; the errors are joined.
func (e *Engine) ImportAll(ctx context.Context) ([]*ImportReport, error) {
	var reports []*ImportReport
	var errs []error
	for _, name := range ImporterNames() {
		imp, err := e.Importer(name)
		if err == nil {
			var r *ImportReport
			if r, err = e.ImportUsage(ctx, imp, time.Time{}); r != nil {
				reports = append(reports, r)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return reports, errors.Join(errs...)
}
