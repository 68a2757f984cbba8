package curator

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Curation is one run of the policy over the catalog's copies.
type Curation struct {
	Policy     Policy
	Candidates []Candidate
	// Now is the moment idle time is judged at; Job.Run takes Clock for
	// a zero one.
	Now time.Time
	// Clock is the time it is, which dates what the curation writes
	// (states, the audit, an archive's folder, the last run); zero means
	// Now. Judged at a later Now (curate --now), a state dated then would
	// hold off every use until that date: a stale skill used since would
	// not come back.
	Clock time.Time
	// Force curates while a copy was used within MinIdle, and archives in
	// a workspace that never recorded a use.
	Force bool
	// DryRun plans and changes nothing.
	DryRun bool
	// Actor names who curates, for the audit log.
	Actor string
	// Elsewhere is the last use of copies on other hosts (the fleet's):
	// a copy used elsewhere more recently than here is judged by that use.
	// Min_idle still looks at this host's uses alone.
	Elsewhere map[Copy]time.Time
	// Fresh are the copies this curation saw first (Job.Run): judged as
	// a dry run, which records no sighting, judges them, as never seen.
	// Their idle time starts at the clock, and a Now after it would find
	// a skill added a minute ago idle for as long.
	Fresh map[Copy]bool
}

// ElsewhereSource is the LastSource a plan gives a copy judged by its use
// on another host.
const ElsewhereSource Source = "fleet"

// planned returns the usage a plan judges: u without the Fresh copies,
// and with the copies used more recently elsewhere given that use. u
// itself is not changed.
func (c Curation) planned(u *Usage) *Usage {
	if len(c.Elsewhere) == 0 && len(c.Fresh) == 0 {
		return u
	}
	pu := *u
	pu.Skills = make(map[Copy]*SkillUsage, len(u.Skills))
	for k, v := range u.Skills {
		if !c.Fresh[k] {
			pu.Skills[k] = v
		}
	}
	for k, at := range c.Elsewhere {
		s, ok := u.Skills[k]
		if !ok {
			s = &SkillUsage{State: Active}
		}
		if !at.After(s.LastActive()) {
			continue
		}
		clone := *s
		t := at
		clone.LastUsedAt, clone.LastSource = &t, ElsewhereSource
		pu.Skills[k] = &clone
	}
	return &pu
}

// at is the time that dates what the curation writes: its Clock.
func (c Curation) at() time.Time {
	if c.Clock.IsZero() {
		return c.Now
	}
	return c.Clock
}

var errDryRun = errors.New("dry run")

// Curate plans under the usage lock and carries the plan out: states are
// set, an archived local copy is moved with Archive (a copy that cannot be
// moved keeps its state, with a warning), and every change is appended to
// the audit log. The returned plan holds the changes made (or, with
// DryRun, those that would be). Taking archived marketplace copies out of
// the cache is the caller's: a change to Archived whose Copy is in the
// marketplace layer asks for a sync.
func (s *Store) Curate(ctx context.Context, c Curation) (Plan, error) {
	byCopy := map[Copy]Candidate{}
	for _, cand := range c.Candidates {
		byCopy[cand.Copy] = cand
	}
	var plan Plan
	var events []Event
	err := s.Update(ctx, func(u *Usage) error {
		if len(c.Elsewhere) == 0 {
			plan = c.Policy.Plan(c.planned(u), c.Candidates, c.Now, c.Force)
		} else if plan = c.Policy.Plan(u, nil, c.Now, c.Force); plan.Skipped == "" {
			// min_idle was checked on this host's uses; the plan judges
			// idle time by the latest use anywhere.
			p := c.Policy
			p.MinIdle = 0
			plan = p.Plan(c.planned(u), c.Candidates, c.Now, c.Force)
		}
		if c.DryRun {
			return errDryRun
		}
		done := []Change{}
		for _, ch := range plan.Changes {
			cand := byCopy[ch.Copy]
			if ch.To == Archived && cand.Dir != "" {
				dst, err := Archive(cand.LayerDir, cand.Dir, ch.Name, c.at())
				if err != nil {
					s.Warn(fmt.Sprintf("%v; %s stays %s", err, ch.Copy, ch.From))
					continue
				}
				ch.Detail = "moved " + cand.Dir + " to " + dst
			}
			u.SetState(ch.Copy, ch.To, c.at())
			done = append(done, ch)
			op := Op(ch.To)
			switch {
			case ch.From == Archived && ch.To == Active:
				// Back in its layer: as a restore, idle time starts
				// over, or the next curation would archive it again.
				op = OpRestored
				u.Skill(ch.Copy).FirstSeenAt = stamp(c.at())
			case ch.To == Active:
				op = OpReactivated
			}
			detail := ch.Reason
			if ch.Detail != "" {
				detail += "; " + ch.Detail
			}
			events = append(events, Event{TS: c.at(), Actor: c.Actor, Op: op, Target: ch.Copy.String(),
				From: string(ch.From), To: string(ch.To), Detail: detail})
		}
		plan.Changes = done
		u.Curator.LastRunAt = stamp(c.at())
		u.Curator.LastSummary = plan.Summary()
		return nil
	})
	if errors.Is(err, errDryRun) {
		return plan, nil
	}
	if err != nil {
		return plan, err
	}
	return plan, s.audit.Append(events...)
}

// Pin keeps a copy as it is through every curation; unpinned, it is
// curated again. A change is appended to the audit log; pinning a pinned
// copy writes no line and reports false.
func (s *Store) Pin(ctx context.Context, c Copy, pinned bool, actor string, now time.Time) (changed bool, err error) {
	if err := c.Validate(); err != nil {
		return false, err
	}
	err = s.Update(ctx, func(u *Usage) error {
		r := u.Skill(c)
		changed = r.Pinned != pinned
		r.Pinned = pinned
		return nil
	})
	if err != nil || !changed {
		return changed, err
	}
	op := map[bool]Op{true: OpPinned, false: OpUnpinned}[pinned]
	return true, s.audit.Append(Event{TS: now, Actor: actor, Op: op, Target: c.String()})
}

// MarkRestored makes a copy active again after a restore, with its idle
// time starting over at now, and appends a restored line whose detail
// says how it came back.
func (s *Store) MarkRestored(ctx context.Context, c Copy, actor, detail string, now time.Time) error {
	if err := c.Validate(); err != nil {
		return err
	}
	var from State
	err := s.Update(ctx, func(u *Usage) error {
		from = u.StateOf(c)
		u.SetState(c, Active, now)
		u.Skill(c).FirstSeenAt = stamp(now) // idle time starts over
		return nil
	})
	if err != nil {
		return err
	}
	return s.audit.Append(Event{TS: now, Actor: actor, Op: OpRestored, Target: c.String(), From: string(from), To: string(Active), Detail: detail})
}

// Audit returns the audit log the store's curation writes to.
func (s *Store) Audit() *Audit { return s.audit }
