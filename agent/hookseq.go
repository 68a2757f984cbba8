package agent

import (
	"crypto/rand"
	"strconv"
	"strings"
	"time"
)

// seqRef numbers a call a hook recorded: the journal it was numbered in
// (random text given with the journal's first numbered call) and its
// number there, one past the call before it. The usage file names the
// last hook's call with its number (hookMarker), and the journal keeps
// every number up to its latest, as an entry or below the floor an
// import left (Take): a journal that lacks a number below the usage
// file's lost calls a hook counted (brought back from a backup, replaced
// by another machine's, removed and begun again by a hook), and the
// import would count them again. Zero for none: a call an older
// skillsync journaled, or no call.
type seqRef struct {
	Journal string
	N       uint64
}

func (s seqRef) String() string { return s.Journal + "/" + strconv.FormatUint(s.N, 10) }

// journalLog is what the journal holds: its entries and its floor.
type journalLog struct {
	entries []hookedEntry
	floor   hookedFloor
}

// identity is the journal the log's calls are numbered in: its floor's,
// else its latest numbered entry's; "" for none.
func (l journalLog) identity() string {
	if l.floor.Journal != "" {
		return l.floor.Journal
	}
	for i := len(l.entries) - 1; i >= 0; i-- {
		if l.entries[i].Journal != "" {
			return l.entries[i].Journal
		}
	}
	return ""
}

// latest is the highest number of journal the log knows of.
func (l journalLog) latest(journal string) uint64 {
	var n uint64
	if journal == "" {
		return 0
	}
	if l.floor.Journal == journal {
		n = l.floor.Floor
	}
	for _, e := range l.entries {
		if e.Journal == journal {
			n = max(n, e.Seq)
		}
	}
	return n
}

// journaled is the highest number of journal up to which the log holds
// every one, as an entry or below its floor. A floor an import leaves
// (Take) says no more: were it the latest number, an import of an agent
// whose calls a gap lacks none of (Codex's, whose calls no hook
// journals) would raise it over the gap of a journal brought back from
// a backup, and the import of the agent whose calls it lacks would no
// longer find it (journalBehind) and count them again.
func (l journalLog) journaled(journal string) uint64 {
	var n uint64
	if journal == "" {
		return 0
	}
	if l.floor.Journal == journal {
		n = l.floor.Floor
	}
	present := map[uint64]bool{}
	for _, e := range l.entries {
		if e.Journal == journal && e.Seq > n {
			present[e.Seq] = true
		}
	}
	// Stops within len(present)+1 steps.
	for present[n+1] {
		n++
	}
	return n
}

// next numbers a hook's call to come, the usage file naming last as the
// last hook's: in last's journal, past both, whatever the log holds, so
// a journal that lost calls keeps the gap for the import to find; in the
// log's own where the usage file names no numbered call; in a new one
// where neither has one.
func (l journalLog) next(last seqRef) seqRef {
	journal := last.Journal
	if journal == "" {
		journal = l.identity()
	}
	if journal == "" {
		return seqRef{Journal: rand.Text(), N: 1}
	}
	n := l.latest(journal)
	if last.Journal == journal {
		n = max(n, last.N)
	}
	return seqRef{Journal: journal, N: n + 1}
}

// missing returns the first and last numbers of last's journal below
// last that the log lacks (last itself the usage file names); ok is false
// when it lacks none.
func (l journalLog) missing(last seqRef) (first, final uint64, ok bool) {
	if last.Journal == "" || last.N <= 1 {
		return 0, 0, false
	}
	var floor uint64
	if l.floor.Journal == last.Journal {
		floor = l.floor.Floor
	}
	if floor >= last.N-1 {
		return 0, 0, false
	}
	present := map[uint64]bool{}
	for _, e := range l.entries {
		if e.Journal == last.Journal && e.Seq > floor && e.Seq < last.N {
			present[e.Seq] = true
		}
	}
	if uint64(len(present)) == last.N-1-floor {
		return 0, 0, false
	}
	// Each loop stops within len(present)+1 steps: a number the usage
	// file holds may be huge.
	first = floor + 1
	for present[first] {
		first++
	}
	final = last.N - 1
	for present[final] {
		final--
	}
	return first, final, true
}

// hasAgent reports whether the log holds a call of agent.
func (l journalLog) hasAgent(agent string) bool {
	for _, e := range l.entries {
		if e.Agent == agent {
			return true
		}
	}
	return false
}

// hookMarker is how the usage file names the call id of the hook of
// agent, without its number.
func hookMarker(agent, id string) string { return agent + " " + journalKey(id) }

// numbered is the marker of the call id of the hook of agent numbered seq
// and recorded at at: the time, to the millisecond, tells an import
// refused for a journal that lacks calls (journalBehind) from when to
// count where the agent's records it reads no longer hold the call.
func numbered(agent, id string, seq seqRef, at time.Time) string {
	m := hookMarker(agent, id)
	if seq.Journal != "" {
		m += " " + seq.String()
		if !at.IsZero() {
			m += " " + at.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
		}
	}
	return m
}

// parseMarker splits what the usage file names as the last hook's call
// into the call (hookMarker) and its number, zero where an older
// skillsync named it without one or it does not parse.
func parseMarker(marker string) (call string, seq seqRef) {
	call, seq, _ = parseMarkerAt(marker)
	return call, seq
}

// parseMarkerAt is parseMarker and the time the call was recorded at,
// zero where the marker names none (a skillsync before it did) or it
// does not parse.
func parseMarkerAt(marker string) (call string, seq seqRef, at time.Time) {
	agent, rest, ok := strings.Cut(marker, " ")
	if !ok {
		return marker, seqRef{}, time.Time{}
	}
	id, num, ok := strings.Cut(rest, " ")
	call = agent + " " + id
	if !ok {
		return call, seqRef{}, time.Time{}
	}
	num, when, _ := strings.Cut(num, " ")
	journal, n, ok := strings.Cut(num, "/")
	v, err := strconv.ParseUint(n, 10, 63)
	if !ok || err != nil || v == 0 || !validID(journal) {
		return call, seqRef{}, time.Time{}
	}
	if t, err := time.Parse(time.RFC3339Nano, when); err == nil {
		at = t.UTC()
	}
	return call, seqRef{Journal: journal, N: v}, at
}
