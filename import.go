package skillsync

import (
	"context"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/catalog"
)

// ImportReport is what an import of an agent's records did.
type ImportReport = agent.Report

// agents records what agents report into the workspace's usage
// (catalog.Agents).
func (e *Engine) agents() catalog.Agents {
	return catalog.Agents{Workspace: e.view(), Targets: e.targetDirs(), Readers: func(dir string) []string { return Agents().Readers(e.cfg.Workspace, dir) }, Actor: e.actor,
		Journal: agent.Journal{StatePath: e.layout.ImportedFile(), Hooked: agent.Hooked{Path: e.layout.HookedFile(), Keep: agent.HookedKeep}, Now: e.now, Root: e.cfg.Workspace}}
}

// ImportUsage records the skill uses and views an agent's own records
// hold (importer: e.g. Claude Code's transcripts), each at the time the
// record gives, through curator.FromImport (agent.Journal.Import says
// how). A use names a skill; a view is a read of the SKILL.md of a visible
// skill, where the catalog has it or in one of the targets.
func (e *Engine) ImportUsage(ctx context.Context, imp agent.Importer, since time.Time) (*ImportReport, error) {
	return e.agents().Import(ctx, imp, since)
}

// RecordHook records one event the hook of the named agent reported as it
// happened, through curator.FromHook (agent.Journal.RecordHook: dup is set
// for a call the hook reported before). An event that names no visible
// skill of the catalog is an *UnknownSkillError.
func (e *Engine) RecordHook(ctx context.Context, agentName string, ev agent.Event) (name string, dup bool, err error) {
	return e.agents().RecordHook(ctx, agentName, ev, func(err error) { e.warnf("%v", err) })
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

// ImportAllSince is ImportAll passing over the events before since
// (agent.Registry.ImportAll).
func (e *Engine) ImportAllSince(ctx context.Context, since time.Time) ([]*ImportReport, error) {
	a := e.agents()
	return Agents().ImportAll(ctx, a.Journal, e.env, e.cfg.Workspace, a.Recorder, since)
}
