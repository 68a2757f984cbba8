// Package targets places a catalog's winners where agents read them: each
// target folder of the config (through materialize.SyncTarget) and each
// AGENTS.md file's block (the skills skillsync prompt lists, located
// relative to the file). It refuses a target reached through a symbolic
// link before anything is written.
package targets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
)

// Places are where a sync puts the winners, as the config says, made
// plain.
type Places struct {
	// Workspace is the workspace's folder; Env gives the home directory.
	Workspace string
	Env       hostenv.Env
	// Targets are the target folders, each with its Dir and Mode; Sync
	// fills in the rest.
	Targets []materialize.Target
	// AgentsMD are the AGENTS.md files whose block is kept current.
	AgentsMD []string
	// Check says how far a target's record is trusted.
	Check materialize.Check
	// MaxSkillSize caps the bytes of one skill's files.
	MaxSkillSize int64
	// Keep names skills a failed source could not give this time: a
	// target keeps its entries of them as they are, unless another
	// skill of the name wins now (materialize.Target.Keep).
	Keep []string
	// Cache is the cache folder, whose materialize.TargetsName lists the
	// target folders the last sync on each config kept; "" gives up none
	// (giveUp).
	Cache string
	// Config is the config file; "" (the built-in default) gives up none:
	// a deleted or stashed skillsync.yaml must not give up the targets the
	// real one names.
	Config string
	// Wait is how long a sync waits for another to finish with a target.
	Wait time.Duration
}

// Keeping is p keeping the entries of names (Places.Keep).
func (p Places) Keeping(names []string) Places {
	p.Keep = names
	return p
}

// Result is what Sync did: one report per target folder and AGENTS.md
// file, in order, and what the user should know.
type Result struct {
	Targets  []materialize.TargetReport
	Warnings []string
}

// CheckPaths refuses, before anything is written, a target reached through a
// planted link and an AGENTS.md file that cannot be written safely, so
// that the cache, the lock and the targets stay in step.
func (p Places) CheckPaths() error {
	for _, t := range p.Targets {
		if err := p.checkTargetPath(t.Dir); err != nil {
			return err
		}
	}
	for _, a := range p.AgentsMD {
		if err := materialize.CheckAgentsMD(p.Workspace, a); err != nil {
			return err
		}
	}
	return nil
}

// Sync places every visible winner of cat in each target. cat takes the
// marketplace layer from the cache as m records it, so a source that
// failed keeps its skills in the targets as it keeps them in the cache.
// Then the target folders taken out of the config are given up (GiveUp),
// not left with copies no sync updates any more. The result holds what
// was done before an error stopped it.
func (p Places) Sync(ctx context.Context, cat *layering.Catalog, m *materialize.Manifest) (Result, error) {
	var res Result
	var listed []string
	list, kept := "", &materialize.TargetList{}
	if p.Cache != "" && p.Config != "" {
		list = filepath.Join(p.Cache, materialize.TargetsName)
		kept, res.Warnings = readKept(list)
		// Listed before anything is placed: a sync stopped after placing a
		// target still leaves it listed, to give up once the config drops it.
		listed = p.listed(kept.Configs[p.configKey()])
		res.Warnings = append(res.Warnings, writeKept(list, kept, p.configKey(), listed)...)
	}
	placed, err := p.place(ctx, cat, m)
	res.Targets, res.Warnings = placed.Targets, append(res.Warnings, placed.Warnings...)
	if err != nil && !errors.Is(err, materialize.ErrTargetTaken) || list == "" {
		return res, err
	}
	given := p.giveUp(ctx, list, kept, listed)
	res.Targets, res.Warnings = append(res.Targets, given.Targets...), append(res.Warnings, given.Warnings...)
	return res, err
}

// place places every visible winner of cat in each target (Sync).
func (p Places) place(ctx context.Context, cat *layering.Catalog, m *materialize.Manifest) (Result, error) {
	res := Result{}
	if len(p.Targets) == 0 {
		err := p.syncAgentsMD(cat, &res)
		return res, err
	}
	skills := make([]materialize.TargetSkill, 0, len(cat.Winners))
	for _, w := range cat.Winners {
		if !w.Visible() {
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
	keep := p.kept(skills)
	var taken []error
	for _, t := range p.Targets {
		if err := p.checkTargetPath(t.Dir); err != nil {
			return res, err
		}
		tr, err := materialize.SyncTarget(ctx, materialize.Target{Dir: t.Dir, Mode: t.Mode, Skills: skills, Keep: keep, Check: p.Check, MaxSkillSize: p.MaxSkillSize, Workspace: p.Workspace, Wait: p.Wait})
		if errors.Is(err, materialize.ErrTargetTaken) {
			// Nothing was written there; the other targets go on, and the
			// report (--json) names the refusal.
			taken = append(taken, err)
			tr.Errors, tr.Refused = append(tr.Errors, err.Error()), true
			res.Targets = append(res.Targets, tr)
			continue
		}
		if err != nil {
			return res, errors.Join(append(taken, err)...)
		}
		res.Warnings = append(res.Warnings, tr.Warnings...)
		res.Warnings = append(res.Warnings, tr.Errors...)
		for _, pr := range tr.Preserved {
			res.Warnings = append(res.Warnings, "a copy in "+t.Dir+" was edited: it was moved to "+pr+" rather than overwritten or removed")
		}
		res.Targets = append(res.Targets, tr)
	}
	err := p.syncAgentsMD(cat, &res)
	return res, errors.Join(append(taken, err)...)
}

// kept is Keep without the names a skill placed now has.
func (p Places) kept(skills []materialize.TargetSkill) []string {
	if len(p.Keep) == 0 {
		return nil
	}
	placed := make(map[string]bool, len(skills))
	for _, s := range skills {
		placed[layering.Key(s.Name)] = true
	}
	var keep []string
	for _, name := range p.Keep {
		if !placed[layering.Key(name)] {
			keep = append(keep, name)
		}
	}
	return keep
}

// agentsMDIntro opens skillsync's block in an AGENTS.md file.
const agentsMDIntro = "## Skills\n\nThe skills below are available in this project (kept current by skillsync sync).\n" +
	"When a task matches a skill's description, read the SKILL.md at its location and follow it.\n\n"

// syncAgentsMD keeps each agents_md file's block current: the skills
// skillsync prompt lists, each located relative to the file's folder.
func (p Places) syncAgentsMD(cat *layering.Catalog, res *Result) error {
	for _, a := range p.AgentsMD {
		base := filepath.Dir(a)
		list, err := layering.PromptAt(layering.PromptSkills(cat.Winners), layering.PromptXML, 0, func(w *layering.Winner) string {
			return relLocation(p.Env, base, w.Location())
		})
		if err != nil {
			return err
		}
		changed, err := materialize.WriteAgentsMD(p.Workspace, a, materialize.AgentsMDBlock(agentsMDIntro+list))
		if err != nil {
			return err
		}
		tr := materialize.TargetReport{Dir: a, Conflicts: []string{}, Preserved: []string{}}
		if changed {
			tr.Written = 1
		}
		res.Targets = append(res.Targets, tr)
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

// checkTargetPath refuses a target inside a workspace's cache or skills
// folder (materialize.CheckTargetPlace), and one reached through a symbolic link
// below the workspace or the home directory: skillsync never writes
// through a link it did not make.
func (p Places) checkTargetPath(dir string) error {
	if err := materialize.CheckTargetPlace(dir); err != nil {
		return err
	}
	base := p.Workspace
	rel, ok := below(base, dir)
	if !ok {
		home, err := p.Env.HomeDir()
		if err != nil {
			return nil
		}
		base = home
		if rel, ok = below(home, dir); !ok {
			return nil
		}
	}
	part := base
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		part = filepath.Join(part, name)
		info, err := os.Lstat(part)
		if err != nil {
			return nil // the rest is made by SyncTarget
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("target %s: %s is a symbolic link; skillsync writes targets only through folders it can see, so replace the link with a folder or point the target at the real path", dir, part)
		}
	}
	return nil
}

// below returns dir's path from base when dir lies below it, as the paths
// are written: a base given with a trailing separator (HOME=/home/ann/)
// or, on Windows, in another case is the same folder.
func below(base, dir string) (string, bool) {
	rel, err := filepath.Rel(filepath.Clean(base), filepath.Clean(dir))
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return "", false
	}
	return rel, true
}
