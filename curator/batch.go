package curator

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// RecordAll counts many uses and views in one locked read and write of the
// usage file, for an import of thousands of events from an agent's
// records. Unlike Record, the uses may come in any order and from the
// past: a copy's last use, last view and last source move only forward, so
// an older event counts without making a copy look idle, and recording the
// same events again changes no time. A stale copy becomes active only when
// a use or view is newer than the moment it became stale; each such copy
// gets one reactivated line in the audit log, and the copies are returned
// in key order. Uses that fail validation are refused as a whole before
// anything is written.
func (s *Store) RecordAll(ctx context.Context, uses []Use) (reactivated []Copy, err error) {
	return s.recordAll(ctx, uses, "", "")
}

// RecordImport is RecordAll for the uses of one import of an agent's
// records, which id names: the same write sets the file's Imports[agent]
// to id, so that the file says whether it holds them.
func (s *Store) RecordImport(ctx context.Context, uses []Use, agent, id string) (reactivated []Copy, err error) {
	return s.recordAll(ctx, uses, agent, id)
}

// LastImport returns the id of the last import of agent's records whose
// uses the file holds, "" when none. A corrupt file holds none: the next
// write sets it aside and starts afresh.
func (s *Store) LastImport(agent string) (string, error) {
	u, err := s.Load()
	if err != nil && !IsCorrupt(err) {
		return "", err
	}
	return u.Imports[agent], nil
}

func (s *Store) recordAll(ctx context.Context, uses []Use, agent, id string) (reactivated []Copy, err error) {
	for _, use := range uses {
		if err := use.Copy.Validate(); err != nil {
			return nil, err
		}
		if !use.From.valid() {
			return nil, fmt.Errorf("record a use of %s: source %q is not one of cli, mcp, hook, import", use.Copy, use.From)
		}
	}
	if len(uses) == 0 && agent == "" {
		return nil, nil
	}
	var events []Event
	err = s.Update(ctx, func(u *Usage) error {
		reactivated, events = nil, nil
		if agent != "" {
			if u.Imports == nil {
				u.Imports = map[string]string{}
			}
			u.Imports[agent] = id
		}
		latest := map[Copy]Use{}
		newest := map[Copy]time.Time{}
		for _, use := range uses {
			sk := u.Skill(use.Copy)
			at := stamp(use.At)
			if sk.FirstSeenAt == nil {
				sk.FirstSeenAt = at
			}
			last := sk.lastUse()
			sk.add(use.At, use.View) // as Record counts: the charts read the days
			if use.At.After(newest[use.Copy]) {
				newest[use.Copy] = use.At
			}
			if use.View {
				sk.ViewCount = addCount(sk.ViewCount, 1)
				if later(at, sk.LastViewedAt) {
					sk.LastViewedAt = at
				}
			} else {
				sk.UseCount = addCount(sk.UseCount, 1)
				if later(at, sk.LastUsedAt) {
					sk.LastUsedAt = at
				}
			}
			if last == nil || !at.Before(*last) {
				sk.LastSource = use.From
			}
			if sk.State == Stale && sk.StateSince != nil && at.After(*sk.StateSince) {
				if l, ok := latest[use.Copy]; !ok || use.At.After(l.At) {
					latest[use.Copy] = use
				}
			}
		}
		// Each copy's days are pruned once, from its newest use: pruned at
		// every use, an import walked them all each time, and in any order
		// but the oldest first kept days past the window.
		for c, at := range newest {
			u.Skill(c).prune(at)
		}
		for c, use := range latest {
			u.SetState(c, Active, use.At)
			reactivated = append(reactivated, c)
			kind := map[bool]string{true: "viewed", false: "used"}[use.View]
			events = append(events, Event{TS: use.At, Actor: use.Actor, Op: OpReactivated, Target: c.String(),
				From: string(Stale), To: string(Active), Detail: kind + " through " + string(use.From)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(reactivated, func(i, j int) bool { return reactivated[i].String() < reactivated[j].String() })
	sort.Slice(events, func(i, j int) bool { return events[i].Target < events[j].Target })
	if aerr := s.audit.Append(events...); aerr != nil {
		s.Warn(fmt.Sprintf("reactivated %d copies but could not write the audit lines: %v", len(events), aerr))
	}
	return reactivated, nil
}

// lastUse is the latest use or view, nil when there was none.
func (s *SkillUsage) lastUse() *time.Time {
	var t *time.Time
	for _, p := range []*time.Time{s.LastUsedAt, s.LastViewedAt} {
		if later(p, t) {
			t = p
		}
	}
	return t
}
