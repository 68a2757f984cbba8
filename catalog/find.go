package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
)

// UnknownSkillError is a name the catalog does not have; Near are the
// names that come close. Held is why this host does not take a skill of
// that name (a staged rollout), "" when no source has one; Archived says
// curation archived a copy of it (a local skill's is moved out of its
// layer), which restore brings back.
type UnknownSkillError struct {
	Name     string
	Near     []string
	Held     string
	Archived bool
	// Unsynced are the configured sources no sync has brought into the
	// cache yet: the skill may be one of theirs.
	Unsynced []string
}

func (e *UnknownSkillError) Error() string {
	switch {
	case e.Held != "":
		return fmt.Sprintf("skill %s is held back on this host (%s); skillsync list --all shows the skills held back", e.Name, e.Held)
	case e.Archived:
		return fmt.Sprintf("skill %s is archived: skillsync restore %s makes it active again", e.Name, e.Name)
	}
	msg := fmt.Sprintf("no skill named %q", e.Name)
	if len(e.Unsynced) > 0 {
		// "run skillsync list" would show an empty list and not say why:
		// on a first run, the source is not synced yet.
		if len(e.Unsynced) == 1 {
			return msg + fmt.Sprintf(" in the cache: no sync has brought source %s yet; skillsync sync brings it, or says why it cannot", e.Unsynced[0])
		}
		return msg + fmt.Sprintf(" in the cache: no sync has brought sources %s yet; skillsync sync brings them, or says why it cannot",
			strings.Join(e.Unsynced, ", "))
	}
	if len(e.Near) > 0 {
		return msg + "; did you mean " + strings.Join(e.Near, ", ") + "?"
	}
	return msg + "; run skillsync list to see them all"
}

// HiddenError is a skill the config (File) hides: read and use refuse it
// as the catalog leaves it out.
type HiddenError struct {
	Name string
	File string
}

func (e *HiddenError) Error() string {
	where := "the config"
	if e.File != "" {
		where = e.File
	}
	return fmt.Sprintf("skill %s is hidden by %s (hidden:); remove it from hidden: to use it", e.Name, where)
}

// Find looks name up in cat, case-insensitively, or says which names come
// close (*UnknownSkillError). A hidden skill is a *HiddenError unless
// withHidden, when it is found marked Hidden.
func (w *Workspace) Find(cat *layering.Catalog, name string, withHidden bool) (*layering.Winner, error) {
	win, ok := cat.Lookup(name)
	if !ok {
		for _, h := range cat.Held {
			if layering.Key(h.Skill.Name) == layering.Key(name) {
				return nil, &UnknownSkillError{Name: h.Skill.Name, Held: h.Reason}
			}
		}
		// list --all shows an archived copy: "no skill named" would deny it.
		if u, err := w.Usage().Load(); err == nil {
			if archived := u.Archived(name); len(archived) > 0 {
				return nil, &UnknownSkillError{Name: archived[0].Name, Archived: true}
			}
		}
		var unsynced []string
		for _, p := range cat.Problems {
			if p.Rule == ruleNotSynced {
				unsynced = append(unsynced, p.Source)
			}
		}
		return nil, &UnknownSkillError{Name: name, Near: layering.Nearest(cat.Winners, name, 3), Unsynced: unsynced}
	}
	if win.Hidden && !withHidden {
		return nil, &HiddenError{Name: win.Skill.Name, File: w.ConfigFile}
	}
	return win, nil
}

// Open opens file of the catalog skill name: its SKILL.md when file is
// "". file is relative to the skill's directory and must stay inside it
// (repository.OpenSkillFile). A hidden skill is a *HiddenError. The
// caller closes the file.
func (w *Workspace) Open(ctx context.Context, name, file string) (fs.File, *layering.Winner, error) {
	cat, err := w.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	win, err := w.Find(cat, name, false)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case win.Skill.Files == nil && win.State == layering.Archived:
		// Archived out of the cache: nothing of it is on disk to read.
		return nil, win, archivedError(win.Skill.Name)
	case win.State == layering.Unsynced:
		return nil, win, unsyncedError(win.Skill.Name)
	}
	if file == "" {
		file = win.Skill.File
	}
	files := win.Skill.Files
	if win.Dir != "" {
		if files, err = repository.SkillFiles(win.Dir, win.Skill.Path, win.Layer != layering.Marketplace, w.Options.Env); err != nil {
			return nil, win, fmt.Errorf("read %s: %w", win.Skill.Name, err)
		}
	}
	f, err := repository.OpenSkillFile(win.Skill.Name, file, "", files)
	return f, win, err
}

// archivedError is a skill archived out of the cache: there is no file
// of it to read (fs.ErrNotExist), and restore brings it back.
type archivedError string

func (e archivedError) Error() string {
	return fmt.Sprintf("skill %s is archived, so its files are not in the cache: skillsync restore %s brings it back", string(e), string(e))
}

func (e archivedError) Is(target error) bool { return target == fs.ErrNotExist }

// unsyncedError is a skill restored since a sync archived it out of the
// cache: there is no file of it to read until a sync brings it back.
type unsyncedError string

func (e unsyncedError) Error() string {
	return fmt.Sprintf("skill %s is restored, and its files are not in the cache yet: skillsync sync brings them back", string(e))
}

func (e unsyncedError) Is(target error) bool { return target == fs.ErrNotExist }

// Use records a use (or a view) of the copy of name that wins now: a
// stale copy becomes active at once; a hidden skill is refused. It
// returns the skill's name.
func (w *Workspace) Use(ctx context.Context, name string, use curator.Use) (string, error) {
	cat, err := w.read(ctx, false)
	if err != nil {
		return "", err
	}
	win, err := w.Find(cat, name, false)
	if err != nil {
		return "", err
	}
	if use.Copy, err = w.copyOfWinner(win, "record a use of", name); err != nil {
		return "", err
	}
	_, err = w.Usage().Record(ctx, use)
	return win.Skill.Name, err
}

// Pin keeps the copy of name that wins now as it is through every
// curation; unpinned, it is curated again. Hidden skills are found.
func (w *Workspace) Pin(ctx context.Context, name string, pinned bool, actor string, now time.Time) (string, error) {
	cat, err := w.read(ctx, false)
	if err != nil {
		return "", err
	}
	win, err := w.Find(cat, name, true)
	if err != nil {
		return "", err
	}
	c, err := w.copyOfWinner(win, "pin", name)
	if err != nil {
		return "", err
	}
	_, err = w.Usage().Pin(ctx, c, pinned, actor, now)
	return win.Skill.Name, err
}

func (w *Workspace) copyOfWinner(win *layering.Winner, what, name string) (curator.Copy, error) {
	c, ok := w.CopyOf(&win.Entry)
	if !ok {
		return c, fmt.Errorf("%s %q: the name cannot be recorded", what, name)
	}
	return c, nil
}

// Agents records what agents report into the workspace's usage: through
// Journal, over the catalog that stands now, each SKILL.md an agent may
// read found where the catalog has it or in one of Targets. Readers
// returns the keys of the agents that look for skills in a target.
type Agents struct {
	Workspace *Workspace
	Journal   agent.Journal
	Targets   []string
	Readers   func(dir string) []string
	Actor     string
}

// Recorder is the Recorder of a for the catalog that stands now, as
// package agent takes it.
func (a Agents) Recorder(ctx context.Context) (agent.Recorder, error) {
	rec, _, err := a.recorder(ctx)
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// recorder returns the workspace's usage as agents' imports and hooks
// record into it (curator.Recorder) over the catalog that stands now,
// which it returns too.
func (a Agents) recorder(ctx context.Context) (*curator.Recorder, *layering.Catalog, error) {
	cat, err := a.Workspace.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	rts := make([]curator.RecorderTarget, len(a.Targets))
	for i, dir := range a.Targets {
		rts[i].Dir = dir
		// An unreadable record leaves Folder nil: folders by name.
		if rec, err := materialize.LoadTargetRecord(dir); err == nil {
			rts[i].Folder = rec.TargetFolder
		}
		if a.Readers != nil {
			rts[i].Agents = a.Readers(dir)
		}
	}
	return curator.NewRecorder(cat, a.Workspace.Store(cat), a.Workspace.CopyOf, rts, a.Actor), cat, nil
}

// Import records the uses and views imp's records hold since since
// (agent.Journal.Import).
func (a Agents) Import(ctx context.Context, imp agent.Importer, since time.Time) (*agent.Report, error) {
	rec, err := a.Recorder(ctx)
	if err != nil {
		return nil, err
	}
	return a.Journal.Import(ctx, rec, imp, since)
}

// RecordHook records one event the hook of the agent keyed agentName
// reported (agent.Journal.RecordHook). An event that names no visible
// skill is an *UnknownSkillError, with the names that come close.
func (a Agents) RecordHook(ctx context.Context, agentName string, ev agent.Event, warn func(error)) (name string, dup bool, err error) {
	rec, cat, err := a.recorder(ctx)
	if err != nil {
		return "", false, err
	}
	name, dup, err = a.Journal.RecordHook(ctx, rec, agentName, ev, warn)
	var unknown *agent.UnknownError
	if errors.As(err, &unknown) {
		if ev.Skill != "" {
			return "", false, &UnknownSkillError{Name: ev.Skill, Near: layering.Nearest(cat.Visible(), ev.Skill, 3)}
		}
		return "", false, &UnknownSkillError{Name: ev.Path}
	}
	return name, dup, err
}
