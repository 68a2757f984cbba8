package skillsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
)

// syncTargets places every visible winner of cat in each target. cat
// takes the marketplace layer from the cache as m records it, so a source that failed
// keeps its skills in the targets as it keeps them in the cache.
func (e *Engine) syncTargets(ctx context.Context, cat *layering.Catalog, m *materialize.Manifest, check materialize.Check, report *SyncReport) error {
	var skills []materialize.TargetSkill
	for _, w := range cat.Winners {
		if w.Hidden || w.State == layering.Archived {
			continue
		}
		ts := materialize.TargetSkill{
			// A nil List is walked only if the skill is written: an
			// unchanged one costs no walk of its files.
			Skill:  materialize.Skill{Name: w.Skill.Name, Files: w.Skill.Files, List: w.Skill.Listing},
			Dir:    w.Dir,
			Source: w.Layer.String(),
		}
		if w.Source != "" {
			ts.Source = "source " + w.Source
		}
		if w.Layer == layering.Marketplace {
			if sk := m.Sources[w.Source].Skills[w.Skill.Name]; sk != nil {
				ts.Hash = sk.Hash
			}
		}
		skills = append(skills, ts)
	}
	for _, t := range e.cfg.Targets {
		if err := e.checkTargetPath(t.Dir); err != nil {
			return err
		}
		tr, err := materialize.SyncTarget(ctx, materialize.Target{Dir: t.Dir, Mode: targetMode(t.Mode), Skills: skills, Check: check, MaxSkillSize: e.maxSkillSize()})
		if err != nil {
			return err
		}
		report.Warnings = append(report.Warnings, tr.Warnings...)
		report.Warnings = append(report.Warnings, tr.Errors...)
		for _, p := range tr.Preserved {
			report.Warnings = append(report.Warnings, "a copy in "+t.Dir+" was edited: it was moved to "+p+" before the new version was written")
		}
		report.Targets = append(report.Targets, tr)
	}
	return e.syncAgentsMD(cat, report)
}

// agentsMDIntro opens skillsync's block in an AGENTS.md file.
const agentsMDIntro = "## Skills\n\nThe skills below are available in this project (kept current by skillsync sync).\n" +
	"When a task matches a skill's description, read the SKILL.md at its location and follow it.\n\n"

// syncAgentsMD keeps each agents_md file's block current: the skills
// skillsync prompt lists, each located relative to the file's folder.
func (e *Engine) syncAgentsMD(cat *layering.Catalog, report *SyncReport) error {
	for _, a := range e.cfg.AgentsMD {
		base := filepath.Dir(a.Path)
		list, err := layering.PromptAt(layering.PromptSkills(cat.Winners), layering.PromptXML, 0, func(w *layering.Winner) string {
			return relLocation(e.env, base, w.Location())
		})
		if err != nil {
			return err
		}
		changed, err := materialize.WriteAgentsMD(e.cfg.Workspace, a.Path, materialize.AgentsMDBlock(agentsMDIntro+list))
		if err != nil {
			return err
		}
		tr := materialize.TargetReport{Dir: a.Path, Conflicts: []string{}, Preserved: []string{}}
		if changed {
			tr.Written = 1
		}
		report.Targets = append(report.Targets, tr)
	}
	return nil
}

// relLocation is loc as an AGENTS.md in base names it: relative and
// slash-separated below base, "~/..." below the home directory, else as
// it is, so the file reads the same on every machine of a team.
func relLocation(env hostenv.Env, base, loc string) string {
	if loc == "" {
		return ""
	}
	if rel, err := filepath.Rel(base, loc); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	if home, err := env.HomeDir(); err == nil {
		if rel, err := filepath.Rel(home, loc); err == nil && filepath.IsLocal(rel) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(loc)
}

// checkTargetPath refuses a target reached through a symbolic link below
// the workspace or the home directory: skillsync never writes through a
// link it did not make.
func (e *Engine) checkTargetPath(dir string) error {
	base := e.cfg.Workspace
	if !strings.HasPrefix(dir, base+string(filepath.Separator)) {
		home, err := e.env.HomeDir()
		if err != nil || !strings.HasPrefix(dir, home+string(filepath.Separator)) {
			return nil
		}
		base = home
	}
	rel, _ := filepath.Rel(base, dir)
	p := base
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		info, err := os.Lstat(p)
		if err != nil {
			return nil // the rest is made by SyncTarget
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("target %s: %s is a symbolic link; skillsync writes targets only through folders it can see, so replace the link with a folder or point the target at the real path", dir, p)
		}
	}
	return nil
}
