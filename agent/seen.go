package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"time"
)

// Seen is the set of an agent's calls already counted, by the agent's id
// of each call (a tool_use id), with the time the call was made. Agents
// copy history into new records (a resumed or forked session holds the
// calls of the one it continues, with their ids and times) and rewrite
// records; a call is counted once however many records hold it.
//
// The set is bounded: past MaxSeen ids the oldest calls are forgotten and
// Floor moves to the newest of them. A call at or before Floor whose id is
// not in the set may have been counted and is passed over.
type Seen struct {
	IDs   map[string]time.Time `json:"ids"`
	Floor time.Time            `json:"floor,omitzero"`
}

// MaxSeen bounds the ids kept per agent: about 60 bytes each in the
// imported file. Skill calls are a few per session, so this is years of
// a busy workspace.
const MaxSeen = 100_000

// seenKey is the key an id is kept under: the id itself when it is short
// printable ASCII, else its hash.
func seenKey(id string) string {
	if validID(id) && len(id) <= 64 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// has reports whether the call id made at at was counted, or may have been.
func (s *Seen) has(id string, at time.Time) bool {
	if _, ok := s.IDs[seenKey(id)]; ok {
		return true
	}
	return !s.Floor.IsZero() && !at.After(s.Floor)
}

// add records the call id made at at as counted.
func (s *Seen) add(id string, at time.Time) { s.addKey(seenKey(id), at) }

// addKey is add for an id already made a key (seenKey).
func (s *Seen) addKey(key string, at time.Time) {
	if s.IDs == nil {
		s.IDs = map[string]time.Time{}
	}
	s.IDs[key] = at.UTC()
}

// forgetFuture drops a Floor after ahead: Import counts no call dated
// so, so an older skillsync or a hand wrote it, and there it would pass
// every real call over as counted. Floor goes back to the oldest call
// kept that is not after ahead, or to none: a call after it that is not
// in the set was not counted, and the marks keep a record from being read
// again where it was read before. The ids are kept, whatever their times:
// one dated past ahead was counted when the clock was ahead of it, and
// the clock has stepped back since; forgotten, a copy of the call (a
// resumed session's) would count again once the clock is right. An id
// moves no Floor until it is the oldest in the set.
func (s *Seen) forgetFuture(ahead time.Time) {
	if !s.Floor.After(ahead) {
		return
	}
	s.Floor = time.Time{}
	for _, at := range s.IDs {
		if !at.After(ahead) && (s.Floor.IsZero() || at.Before(s.Floor)) {
			s.Floor = at
		}
	}
}

// trim forgets the oldest ids past max, moving Floor.
func (s *Seen) trim(max int) {
	if len(s.IDs) <= max {
		return
	}
	type entry struct {
		id string
		at time.Time
	}
	all := make([]entry, 0, len(s.IDs))
	for id, at := range s.IDs {
		all = append(all, entry{id, at})
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].at.Equal(all[j].at) {
			return all[i].at.Before(all[j].at)
		}
		return all[i].id < all[j].id
	})
	drop := all[:len(all)-max]
	for _, e := range drop {
		delete(s.IDs, e.id)
	}
	// Calls made at the time of the newest forgotten one may still be in
	// the set; they are passed over too, as counted.
	if last := drop[len(drop)-1].at; last.After(s.Floor) {
		s.Floor = last
	}
}
