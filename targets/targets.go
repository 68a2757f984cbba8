// Package targets places a catalog's winners where agents read them: each
// target folder of the config (through materialize.SyncTarget) and each
// AGENTS.md file's block (the skills skillsync prompt lists, located
// relative to the file). A target it cannot write safely (reached through
// a symbolic link, another workspace's) is refused alone, before anything
// is written there: the others go on.
package targets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
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

// Refusals are the target folders and AGENTS.md files a sync would leave
// as they are, each with why (Sync): what skillsync status names. It
// changes nothing.
func (p Places) Refusals() map[string]error {
	out := map[string]error{}
	for _, t := range p.Targets {
		if err := p.CheckTarget(t.Dir); err != nil {
			out[t.Dir] = err
		}
	}
	for _, a := range p.AgentsMD {
		if err := materialize.CheckAgentsMD(p.Workspace, a); err != nil {
			out[a] = err
		}
	}
	return out
}

// Sync places every visible winner of cat in each target. cat takes the
// marketplace layer from the cache as m records it, so a source that
// failed keeps its skills in the targets as it keeps them in the cache.
// Then the target folders taken out of the config are given up (GiveUp),
// not left with copies no sync updates any more. A target or AGENTS.md
// file it cannot write safely is refused alone (materialize.IsRefused,
// materialize.ErrOutsideWorkspace): left as it is, its report Refused
// with the refusal among its Errors, the others placed; the error joins
// the refusals. The result holds what was done before an error stopped it.
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
	placed, refused, err := p.place(ctx, cat, m)
	res.Targets, res.Warnings = placed.Targets, append(res.Warnings, placed.Warnings...)
	if err != nil || list == "" {
		return res, errors.Join(append(refused, err)...)
	}
	given := p.giveUp(ctx, list, kept, listed)
	res.Targets, res.Warnings = append(res.Targets, given.Targets...), append(res.Warnings, given.Warnings...)
	return res, errors.Join(refused...)
}

// leavesOut reports whether files, a local skill's folder as its layer
// is read, leaves out a file on disk that git ignores (or cannot say).
func leavesOut(ctx context.Context, files fs.FS) bool {
	view, ok := files.(repository.FolderFS)
	if !ok {
		return false
	}
	names, more, err := repository.Ignored(ctx, view)
	return err != nil || len(names) > 0 || more > 0
}

// place places every visible winner of cat in each target (Sync). refused
// are the refusals of the targets and AGENTS.md files left as they are;
// err is what stopped it.
func (p Places) place(ctx context.Context, cat *layering.Catalog, m *materialize.Manifest) (res Result, refused []error, err error) {
	if len(p.Targets) == 0 {
		refused, err = p.syncAgentsMD(cat, &res)
		return res, refused, err
	}
	skills := make([]materialize.TargetSkill, 0, len(cat.Winners))
	link := slices.ContainsFunc(p.Targets, func(t materialize.Target) bool { return t.Mode == materialize.Symlink })
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
		if link && w.Layer != layering.Marketplace && ts.Dir != "" && leavesOut(ctx, w.Skill.Files) {
			// A link to a layer's skill shows the agent its whole folder,
			// what git ignores there too (a .env): such a skill is copied,
			// without them, as a copy-mode target holds it.
			ts.Dir = ""
		}
		if w.Layer == layering.Marketplace {
			if sk := m.Sources[w.Source].Skills[w.Skill.Name]; sk != nil {
				ts.Hash = sk.Hash
			}
		}
		skills = append(skills, ts)
	}
	keep := p.kept(skills)
	for _, t := range p.Targets {
		tr, err := p.syncTarget(ctx, materialize.Target{Dir: t.Dir, Mode: t.Mode, Skills: skills, Keep: keep, Check: p.Check, MaxSkillSize: p.MaxSkillSize, Workspace: p.Workspace, Wait: p.Wait})
		if materialize.IsRefused(err) {
			// Nothing was written there; the other targets go on, and the
			// report (--json) names the refusal.
			refused = append(refused, err)
			tr.Errors, tr.Refused = append(tr.Errors, err.Error()), true
			res.Targets = append(res.Targets, tr)
			continue
		}
		if err != nil {
			return res, refused, err
		}
		res.Warnings = append(res.Warnings, tr.Warnings...)
		res.Warnings = append(res.Warnings, tr.Errors...)
		for _, pr := range tr.Preserved {
			res.Warnings = append(res.Warnings, "a copy in "+t.Dir+" was edited: it was moved to "+pr+" rather than overwritten or removed")
		}
		res.Targets = append(res.Targets, tr)
	}
	more, err := p.syncAgentsMD(cat, &res)
	return res, append(refused, more...), err
}

// syncTarget is materialize.SyncTarget after CheckTarget, whose refusal
// leaves the target as it is.
func (p Places) syncTarget(ctx context.Context, t materialize.Target) (materialize.TargetReport, error) {
	if err := p.CheckTarget(t.Dir); err != nil {
		return materialize.TargetReport{Dir: t.Dir, Conflicts: []string{}, Preserved: []string{}}, err
	}
	// SyncTarget looks at each folder from the root again as it makes
	// them, refusing one swapped for a link since.
	t.Root = p.root(t.Dir)
	return materialize.SyncTarget(ctx, t)
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
// skillsync prompt lists, each located relative to the file's folder. A
// file that cannot be written safely (materialize.CheckAgentsMD: a link
// out of the workspace) is refused alone, before anything is written.
func (p Places) syncAgentsMD(cat *layering.Catalog, res *Result) (refused []error, err error) {
	for _, a := range p.AgentsMD {
		tr := materialize.TargetReport{Dir: a, Conflicts: []string{}, Preserved: []string{}}
		refuse := func(err error) {
			refused = append(refused, err)
			tr.Errors, tr.Refused = []string{err.Error()}, true
			res.Targets = append(res.Targets, tr)
		}
		if err := materialize.CheckAgentsMD(p.Workspace, a); err != nil {
			refuse(err)
			continue
		}
		base := filepath.Dir(a)
		list, err := layering.PromptAt(layering.PromptSkills(cat.Winners), layering.PromptXML, 0, func(w *layering.Winner) string {
			return relLocation(p.Env, base, w.Location())
		})
		if err != nil {
			return refused, err
		}
		changed, err := materialize.WriteAgentsMD(p.Workspace, a, materialize.AgentsMDBlock(agentsMDIntro+list))
		if errors.Is(err, materialize.ErrOutsideWorkspace) {
			refuse(err) // a link planted since the check: nothing was written
			continue
		}
		if err != nil {
			return refused, err
		}
		if changed {
			tr.Written = 1
		}
		res.Targets = append(res.Targets, tr)
	}
	return refused, nil
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

// CheckTarget refuses a target inside a workspace's cache or skills
// folder (materialize.CheckTargetPlace), and one reached through a
// symbolic link below the workspace or the home directory
// (materialize.ErrTargetLinked): skillsync never writes through a link it
// did not make. Sync refuses such a target alone, before anything is
// written there. It changes nothing.
func (p Places) CheckTarget(dir string) error {
	if err := materialize.CheckTargetPlace(dir); err != nil {
		return err
	}
	base := p.root(dir)
	if base == "" {
		return nil
	}
	rel, _ := below(base, dir)
	part := base
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		part = filepath.Join(part, name)
		info, err := os.Lstat(part)
		if err != nil {
			return nil // the rest is made by SyncTarget
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return p.linked(dir, base, part)
		}
	}
	return nil
}

// root is the folder from which no symbolic link may lead to the target
// dir: the workspace when dir lies below it, else the home directory
// when dir lies below that, else "" (CheckTarget, materialize.Target.Root).
func (p Places) root(dir string) string {
	if _, ok := below(p.Workspace, dir); ok {
		return p.Workspace
	}
	if home, err := p.Env.HomeDir(); err == nil {
		if _, ok := below(home, dir); ok {
			return home
		}
	}
	return ""
}

// linked is the refusal of the target dir, reached through the symbolic
// link at link below base. It names the folder the link leads to, and the
// path to give the target instead, when the link can be followed.
func (p Places) linked(dir, base, link string) error {
	const why = "skillsync writes a target only through folders it can see, so it leaves this one as it is"
	dest, err := filepath.EvalSymlinks(link)
	if err != nil {
		return fmt.Errorf("target %s %w: %s is a symbolic link that cannot be followed (%w); %s: point the target at a folder, or replace the link with one",
			dir, materialize.ErrTargetLinked, link, err, why)
	}
	// Said as the base is written (a home reached through /private on
	// macOS stays /Users/ann): every folder below it is real.
	if realBase, err := filepath.EvalSymlinks(base); err == nil {
		if rel, ok := below(realBase, dest); ok {
			dest = filepath.Join(base, rel)
		}
	}
	real := dest
	if rest, err := filepath.Rel(link, dir); err == nil && rest != "." {
		real = filepath.Join(dest, rest)
	}
	at := real
	if entry := p.entry(real); entry != real {
		at += " (dir: " + entry + ")"
	}
	return fmt.Errorf("target %s %w: %s is a symbolic link to %s, and %s; if the skills belong where the link leads, point the target at %s, else replace the link with a folder",
		dir, materialize.ErrTargetLinked, link, dest, why, at)
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

// Verifiable splits dirs, the target folders, into those verify reads
// and a difference (materialize.Unsynced) for each reached through a
// symbolic link below the workspace or the home directory (CheckTarget):
// a sync leaves such a target as it is, so verify neither reads its
// record through the link, whose copies no sync of this workspace keeps
// (nor trusts a record planted where the link leads), nor says it
// matches; it says why, as status does.
func (p Places) Verifiable(dirs []string) ([]string, []materialize.Difference) {
	var ok []string
	var refused []materialize.Difference
	for _, d := range dirs {
		if err := p.CheckTarget(d); errors.Is(err, materialize.ErrTargetLinked) {
			refused = append(refused, materialize.Difference{Path: d + " (refused: it is reached through a symbolic link; skillsync status says which)", Kind: materialize.Unsynced})
			continue
		}
		ok = append(ok, d)
	}
	return ok, refused
}
