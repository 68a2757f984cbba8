package skillsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
)

// ImportReport is what an import of an agent's records did.
type ImportReport = agent.Report

// journal is the workspace's import state and hook journal.
func (e *Engine) journal() agent.Journal {
	return agent.Journal{StatePath: e.layout.ImportedFile(), Hooked: agent.Hooked{Path: e.layout.HookedFile(), Keep: agent.HookedKeep}, Now: e.now}
}

// ImportUsage records the skill uses and views an agent's own records
// hold (importer: e.g. Claude Code's transcripts), each at the time the
// record gives, through curator.FromImport (agent.Journal.Import says
// how). A use names a skill; a view is a read of the SKILL.md of a visible
// skill, where the catalog has it or in one of the targets.
func (e *Engine) ImportUsage(ctx context.Context, imp agent.Importer, since time.Time) (*ImportReport, error) {
	rec, err := e.recorder(ctx)
	if err != nil {
		return nil, err
	}
	return e.journal().Import(ctx, rec, imp, since)
}

// RecordHook records one event the hook of the named agent reported as it
// happened, through curator.FromHook, at the event's time or now: a use of
// the skill it names or a view of the SKILL.md it read. It returns the
// skill's name, or an *UnknownSkillError when the event names no visible
// skill of the catalog. The call's id goes to the hooked journal, so an
// import of the agent's records does not count it again; a journal that
// cannot be written is a warning, the use is counted. A call whose id the
// hook reported before is not counted again: dup is set.
func (e *Engine) RecordHook(ctx context.Context, agentName string, ev agent.Event) (name string, dup bool, err error) {
	rec, err := e.recorder(ctx)
	if err != nil {
		return "", false, err
	}
	name, dup, err = e.journal().RecordHook(ctx, rec, agentName, ev, func(err error) { e.warnf("%v", err) })
	var unknown *agent.UnknownError
	if errors.As(err, &unknown) {
		if ev.Skill != "" {
			return "", false, &UnknownSkillError{Name: ev.Skill, Near: layering.Nearest(rec.cat.Visible(), ev.Skill, 3)}
		}
		return "", false, &UnknownSkillError{Name: ev.Path}
	}
	return name, dup, err
}

// recorder is the workspace's usage as package agent records into it: the
// visible winners of one catalog and the usage file.
type recorder struct {
	e   *Engine
	cat *layering.Catalog
	// paths maps each SKILL.md an agent may read (where the catalog has
	// the skill, and in every target) to its winner; made on first use.
	paths map[string]*layering.Winner
	// copies are the copies Resolve gave, by name.
	copies map[string]curator.Copy
}

func (e *Engine) recorder(ctx context.Context) (*recorder, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return &recorder{e: e, cat: cat, copies: map[string]curator.Copy{}}, nil
}

// Resolve returns the copy an event names: by name for a use of the skill
// tool, by the path of its SKILL.md for a read. Hidden and archived skills
// are no skills here: they are in no target.
func (r *recorder) Resolve(ev agent.Event) (string, bool) {
	var w *layering.Winner
	if ev.Skill != "" {
		w, _ = r.cat.Lookup(ev.Skill)
	} else if ev.Path != "" {
		if r.paths == nil {
			r.paths = r.skillFiles()
		}
		w = r.paths[filepath.Clean(ev.Path)]
	}
	if w == nil || w.Hidden || w.State == layering.Archived {
		return "", false
	}
	c, ok := r.e.copyOf(&w.Entry)
	if !ok {
		return "", false
	}
	r.copies[c.Name] = c
	return c.Name, true
}

// Record records uses Resolve named in the usage file, by its actor.
func (r *recorder) Record(ctx context.Context, uses []agent.Use) ([]string, error) {
	out := make([]curator.Use, 0, len(uses))
	for _, u := range uses {
		c, ok := r.copies[u.Skill]
		if !ok {
			return nil, fmt.Errorf("record a use of %q: not a skill the import resolved", u.Skill)
		}
		out = append(out, curator.Use{Copy: c, View: u.View, From: curator.Source(u.From), At: u.At, Actor: r.e.actor})
	}
	store := r.e.Usage()
	store.Resolve = r.e.resolverFrom(r.cat)
	re, err := store.RecordAll(ctx, out)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(re))
	for _, c := range re {
		names = append(names, c.Name)
	}
	return names, nil
}

func (r *recorder) skillFiles() map[string]*layering.Winner {
	out := map[string]*layering.Winner{}
	// A skill's folder in a target is its name unless the target's record
	// says otherwise (a normalized folder name, or the _2 rule).
	records := make([]*materialize.TargetRecord, len(r.e.cfg.Targets))
	for i, t := range r.e.cfg.Targets {
		records[i], _ = materialize.LoadTargetRecord(t.Dir) // unreadable: an empty record
	}
	for _, w := range r.cat.Visible() {
		file := cmp.Or(w.Skill.File, "SKILL.md")
		if loc := w.Location(); loc != "" {
			out[filepath.Clean(loc)] = w
		}
		for i, t := range r.e.cfg.Targets {
			folder, ok := records[i].TargetFolder(w.Skill.Name)
			if !ok {
				folder = w.Skill.Name
			}
			out[filepath.Join(t.Dir, folder, file)] = w
		}
	}
	return out
}

// ImporterNames returns the agents whose records Engine.Importer reads.
func ImporterNames() []string {
	return Agents().Keys(func(r agent.Registration) bool { return r.Importer != nil })
}

// Importer returns the importer of the named agent's records of this
// workspace (a name of Agents: "claude" reads Claude Code's session
// transcripts under $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects).
func (e *Engine) Importer(name string) (agent.Importer, error) {
	imp, err := Agents().Importer(e.env, name, e.cfg.Workspace)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return imp, nil
}

// ImportAll imports the records of every agent of Agents that keeps
// records on this machine, as ImportUsage does, and returns a report per
// agent. An agent that fails does not stop the others; the errors are
// joined.
func (e *Engine) ImportAll(ctx context.Context) ([]*ImportReport, error) {
	return e.ImportAllSince(ctx, time.Time{})
}

// ImportAllSince is ImportAll passing over the events before since.
func (e *Engine) ImportAllSince(ctx context.Context, since time.Time) ([]*ImportReport, error) {
	var reports []*ImportReport
	var errs []error
	for _, reg := range Agents().All() {
		if reg.Importer == nil {
			continue
		}
		imp, found, err := reg.Importer(e.env, e.cfg.Workspace)
		if err == nil && !found {
			continue
		}
		if err == nil {
			var r *ImportReport
			if r, err = e.ImportUsage(ctx, imp, since); r != nil {
				reports = append(reports, r)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", reg.Key, err))
		}
	}
	return reports, errors.Join(errs...)
}
