package drafts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skillsync/skillsync/catalog"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/usageerr"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// RequestError is a rollout asked for in a way that cannot be met (a
// percentage that is none, --environments without --canary): the
// caller's mistake to fix, not a failure of the gate. It is the root's
// skillsync.UsageError.
type RequestError = usageerr.UsageError

func requestErrorf(format string, args ...any) error {
	return usageerr.Errorf(format, args...)
}

// UnknownSkillError is a rollout of a name the marketplace layer does not
// have: the catalog's error for a name it does not have.
type UnknownSkillError = catalog.UnknownSkillError

// canary returns the edit that writes a promotion's canary fields
// (metadata.rollout and metadata.environments) into the draft's
// SKILL.md, so the skill reaches only that share of hosts; nil when none
// is asked for. A canary asked for wrongly is a *RequestError, before
// anything is written.
func canary(name string, opts PromoteOptions) (func([]byte) ([]byte, error), error) {
	if opts.Rollout == "" {
		if opts.Environments != nil {
			return nil, requestErrorf("promote %s: --environments goes with --canary", name)
		}
		return nil, nil
	}
	p, err := fleet.ParsePercent(opts.Rollout)
	if err != nil {
		return nil, requestErrorf("promote %s: --canary: %w", name, err)
	}
	if !skill.ValidName(name) {
		return nil, requestErrorf("promote %s: not a valid skill name", name)
	}
	for _, env := range opts.Environments {
		if !fleet.ValidHostID(env) || strings.ContainsAny(env, " ,") {
			return nil, requestErrorf("promote %s: environment %q is not one printable word", name, env)
		}
	}
	envs := opts.Environments
	if envs == nil {
		envs = []string{}
	}
	return func(md []byte) ([]byte, error) { return fleet.SetRollout(md, p, envs) }, nil
}

// RolloutOptions say how a rollout change is published.
type RolloutOptions struct {
	// Approver is the commit's author; "" is the gate's actor.
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
	// Unchanged says the source held the skill at this share already:
	// nothing was published, and Commit is the revision that holds it.
	Unchanged bool `json:"unchanged,omitempty"`
}

// marketplaceEntry is w's copy from a source: w itself, or the one a
// local skill shadows here, which hosts still take and a rollout stages;
// nil when no source has the name.
func marketplaceEntry(w *layering.Winner) *layering.Entry {
	if w.Layer == layering.Marketplace {
		return &w.Entry
	}
	for i := range w.Shadowed {
		if w.Shadowed[i].Layer == layering.Marketplace {
			return &w.Shadowed[i]
		}
	}
	return nil
}

// Rollout sets the marketplace skill name's metadata.rollout to percent in
// its source, published the way a promotion is: a review branch, or the
// tracked branch with publish: direct. Only the SKILL.md changes, and
// from what the source holds at the commit built on: every other file,
// link and mode stays as the source has it, and a change made upstream
// since this workspace synced is kept. A skill held back from this host is found too.
// A source that holds the skill at that share already is left alone, and
// the result says Unchanged: a script that sets a share twice succeeds.
func (g *Gate) Rollout(ctx context.Context, name, percent string, opts RolloutOptions) (*RolloutResult, error) {
	p, err := fleet.ParsePercent(percent)
	if err != nil {
		return nil, requestErrorf("rollout %s: %w", name, err)
	}
	cat, err := g.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	var entry *layering.Entry
	w, found := cat.Lookup(name)
	if found {
		entry = marketplaceEntry(w)
	}
	for i := range cat.Held {
		if h := &cat.Held[i]; entry == nil && h.Layer == layering.Marketplace && layering.Key(h.Skill.Name) == layering.Key(name) {
			entry = &h.Entry
		}
	}
	if entry == nil && found {
		return nil, requestErrorf("rollout %s: it is a %s skill, and no source has one of that name; rollout stages a source's skill for the hosts that take it", name, w.Layer)
	}
	if entry == nil || entry.Skill.Files == nil {
		return nil, incomplete(cat, &UnknownSkillError{Name: name})
	}
	author := cmp.Or(opts.Approver, g.Actor)
	// A rollout publishes into a source as a promotion does: the gate's
	// policy holds for it. Without --approver the user running it
	// approves, by the name an approvers list gives.
	if err := g.Policy.CheckRollout(entry.Skill.Name, cmp.Or(opts.Approver, strings.TrimPrefix(g.Actor, "user:")), entry.Source); err != nil {
		return nil, err
	}
	t, err := g.OpenSource(entry.Source)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("rollout %s: source %s is not in the config", name, entry.Source)
	}
	defer repository.Close(t.Repository)
	pub, ok := t.Repository.(repository.Publisher)
	if !ok {
		return nil, fmt.Errorf("rollout %s: source %s (%s) takes no publications", name, t.Name, t.Kind)
	}
	base := t.Base
	if _, remote := t.Repository.(repository.Fetcher); !remote {
		base = "" // a database publishes on its tip
	}
	branch := opts.Branch
	if branch == "" && !t.Direct {
		branch = "skillsync/" + entry.Skill.Name + "-rollout-" + strings.TrimSuffix(fleet.FormatPercent(p), "%")
	}
	now := g.Now()
	msg := fmt.Sprintf("Roll out skill %s to %s of hosts\n\nSkill: %s\nRollout: %s\n", entry.Skill.Name, fleet.FormatPercent(p), entry.Skill.Name, fleet.FormatPercent(p))
	edit := func(md []byte) ([]byte, error) { return fleet.SetRollout(md, p, nil) }
	res, err := pub.Publish(ctx, repository.PublishRequest{Name: entry.Skill.Name, Edit: edit, Base: base, Branch: branch,
		Direct: t.Direct, Message: msg, Author: author, Email: EmailOf(author), When: now})
	if errors.Is(err, repository.ErrNothingToPublish) {
		return &RolloutResult{Name: entry.Skill.Name, Source: t.Name, Rollout: fleet.FormatPercent(p), Commit: string(cmp.Or(res.Base, base)), Unchanged: true}, nil
	}
	if errors.Is(err, repository.ErrNonFastForward) {
		return nil, fmt.Errorf("rollout %s to source %s: %w; run skillsync sync to see what changed there, and roll out again", name, t.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("rollout %s to source %s: %w", name, t.Name, err)
	}
	out := &RolloutResult{Name: entry.Skill.Name, Source: t.Name, Rollout: fleet.FormatPercent(p), Branch: res.Branch, Commit: string(res.Commit), Direct: res.Direct}
	ev := curator.Event{TS: now, Actor: g.Actor, Op: OpPublished, Target: "marketplace:" + t.Name + "/" + entry.Skill.Name,
		To: res.Branch, Commit: string(res.Commit), Detail: "rollout " + out.Rollout + " by " + author}
	if err := g.Audit.Append(ev); err != nil {
		return out, fmt.Errorf("published the rollout of %s, but the audit log was not written: %w", name, err)
	}
	return out, nil
}

// incomplete adds to err the errors that kept the catalog from reading
// every source (a cache that is corrupt, a source not synced): they, not
// the name, may be why the skill was not found.
func incomplete(cat *layering.Catalog, err error) error {
	var msgs []string
	for _, p := range cat.Problems {
		if p.Level == skill.Error {
			msgs = append(msgs, p.Message)
		}
	}
	if len(msgs) == 0 {
		return err
	}
	return fmt.Errorf("%w; the catalog is not whole: %s", err, strings.Join(msgs, "; "))
}
