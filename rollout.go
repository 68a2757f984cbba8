package skillsync

import (
	"context"
	"errors"
	"fmt"
	"github.com/skillsync/skillsync/drafts"
	"io/fs"
	"path/filepath"
	"strings"
	"testing/fstest"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// stageRollout writes a promotion's canary fields (metadata.rollout and
// metadata.environments) into the draft's SKILL.md before it goes
// through the gate, so the skill reaches only that share of hosts.
func (e *Engine) stageRollout(name string, opts drafts.PromoteOptions) error {
	if opts.Rollout == "" {
		if opts.Environments != nil {
			return usageErrorf("promote %s: --environments goes with --canary", name)
		}
		return nil
	}
	p, err := fleet.ParsePercent(opts.Rollout)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("promote %s: --canary: %w", name, err)}
	}
	if !skill.ValidName(name) {
		return usageErrorf("promote %s: not a valid skill name", name)
	}
	for _, env := range opts.Environments {
		if !fleet.ValidHostID(env) || strings.ContainsAny(env, " ,") {
			return usageErrorf("promote %s: environment %q is not one printable word", name, env)
		}
	}
	path := filepath.Join(e.layout.DraftsDir(), name, "SKILL.md")
	data, err := atomicfile.ReadBounded(path, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the gate says there is no such draft
	}
	if err != nil {
		return fmt.Errorf("promote %s: read the draft's SKILL.md: %w", name, err)
	}
	out, err := fleet.SetRollout(data, p, orNone(opts.Environments))
	if err != nil {
		return fmt.Errorf("promote %s: %s: %w", name, path, err)
	}
	return atomicfile.WriteFile(path, out, 0o644)
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// RolloutOptions say how a rollout change is published.
type RolloutOptions struct {
	// Approver is the commit's author; "" is the engine's actor.
	Approver string
	// Branch replaces skillsync/<name>-rollout for a review branch.
	Branch string
}

// RolloutResult is what Rollout published.
type RolloutResult struct {
	Name    string `json:"name"`
	Source  string `json:"source"`
	Rollout string `json:"rollout"`
	Branch  string `json:"branch,omitempty"`
	Commit  string `json:"commit,omitempty"`
	Direct  bool   `json:"direct,omitempty"`
}

// Rollout sets the marketplace skill name's metadata.rollout to percent in
// its source, published the way a promotion is: a review branch, or the
// tracked branch with publish: direct. The skill's other files are sent as
// the cache holds them.
func (e *Engine) Rollout(ctx context.Context, name, percent string, opts RolloutOptions) (*RolloutResult, error) {
	p, err := fleet.ParsePercent(percent)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("rollout %s: %w", name, err)}
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	var entry *layering.Entry
	if w, ok := cat.Lookup(name); ok && w.Layer == layering.Marketplace {
		entry = &w.Entry
	}
	for i := range cat.Held {
		if h := &cat.Held[i]; entry == nil && h.Layer == layering.Marketplace && layering.Key(h.Skill.Name) == layering.Key(name) {
			entry = &h.Entry
		}
	}
	if entry == nil || entry.Skill.Files == nil {
		return nil, &UnknownSkillError{Name: name}
	}
	src, ok := e.source(entry.Source)
	if !ok {
		return nil, fmt.Errorf("rollout %s: source %s is not in the config", name, entry.Source)
	}
	files, err := rolledOut(entry.Skill, p)
	if err != nil {
		return nil, fmt.Errorf("rollout %s (source %s): %w", name, src.Name, err)
	}
	r, err := e.open(src, "")
	if err != nil {
		return nil, err
	}
	defer closeRepository(r)
	pub, ok := r.(repository.Publisher)
	if !ok {
		return nil, fmt.Errorf("rollout %s: source %s (%s) takes no publications", name, src.Name, src.Kind)
	}
	var base repository.Revision
	if m, err := materialize.ReadManifest(e.layout.CacheDir()); err == nil {
		if rec, ok := m.Sources[src.Name]; ok && isRemote(r) {
			base = repository.Revision(rec.Revision)
		}
	}
	author := opts.Approver
	if author == "" {
		author = e.actor
	}
	direct := publishesDirect(src)
	branch := opts.Branch
	if branch == "" && !direct {
		branch = "skillsync/" + entry.Skill.Name + "-rollout-" + strings.TrimSuffix(fleet.FormatPercent(p), "%")
	}
	now := e.now()
	msg := fmt.Sprintf("Roll out skill %s to %s of hosts\n\nSkill: %s\nRollout: %s\n", entry.Skill.Name, fleet.FormatPercent(p), entry.Skill.Name, fleet.FormatPercent(p))
	list := make([]skill.File, 0, len(files))
	for path, f := range files {
		list = append(list, skill.File{Path: path, Mode: f.Mode, Size: int64(len(f.Data))})
	}
	res, err := pub.Publish(ctx, repository.PublishRequest{Name: entry.Skill.Name, Files: files, List: list, Base: base, Branch: branch,
		Direct: direct, Message: msg, Author: author, Email: drafts.EmailOf(author), When: now})
	if err != nil {
		return nil, fmt.Errorf("rollout %s to source %s: %w", name, src.Name, err)
	}
	out := &RolloutResult{Name: entry.Skill.Name, Source: src.Name, Rollout: fleet.FormatPercent(p), Branch: res.Branch, Commit: string(res.Commit), Direct: res.Direct}
	ev := curator.Event{TS: now, Actor: e.actor, Op: drafts.OpPublished, Target: "marketplace:" + src.Name + "/" + entry.Skill.Name,
		To: res.Branch, Commit: string(res.Commit), Detail: "rollout " + out.Rollout + " by " + author}
	if err := e.Audit().Append(ev); err != nil {
		return out, fmt.Errorf("published the rollout of %s, but the audit log was not written: %w", name, err)
	}
	return out, nil
}

// rolledOut reads a skill's files with SKILL.md's rollout set to p.
func rolledOut(s skill.Skill, p float64) (fstest.MapFS, error) {
	out := fstest.MapFS{}
	for _, f := range s.FileList() {
		data, err := fs.ReadFile(s.Files, f.Path)
		if err != nil {
			return nil, err
		}
		out[f.Path] = &fstest.MapFile{Data: data, Mode: f.Mode}
	}
	md, ok := out["SKILL.md"]
	if !ok {
		return nil, errors.New("the skill has no SKILL.md")
	}
	data, err := fleet.SetRollout(md.Data, p, nil)
	if err != nil {
		return nil, err
	}
	md.Data = data
	return out, nil
}
