package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/workspace"
)

// Source says how a recorded use reached skillsync; the workspace's
// usage file keeps it as the skill's last_source.
type Source string

// Where the uses an agent package finds come from.
const (
	// FromImport is a use or view read from an agent's own records.
	FromImport Source = "import"
	// FromHook is a use or view an agent's hook reported as it happened.
	FromHook Source = "hook"
	// FromSlash is a skill the user started by typing /name, read from
	// the agent's records.
	FromSlash Source = "slash"
)

// Use is one use (or view) of a workspace skill, ready to record.
type Use struct {
	// Skill is the name Recorder.Resolve gave.
	Skill string
	View  bool
	At    time.Time
	From  Source
}

// Recorder is the workspace's usage as this package sees it: the root
// package implements it over its catalog and usage file, so agent/ never
// imports the root.
type Recorder interface {
	// Resolve returns the name of the workspace skill an event the agent
	// keyed key reported names, by its skill name or by the path of its
	// SKILL.md; false when the event names none (a plugin's skill, a
	// personal one, a hidden one, the user's own skill of the same name).
	Resolve(key string, ev Event) (string, bool)
	// Record records the uses, each at its time, as the import id of the
	// agent's records, in one write that says so (LastImport), and
	// returns the skills a use made active again.
	Record(ctx context.Context, uses []Use, agent, id string) (reactivated []string, err error)
	// LastImport returns the id of the last import of the agent's
	// records whose uses are recorded, "" when none.
	LastImport(agent string) (string, error)
}

// UnknownError is an event that names no skill of the workspace.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("%s is not a skill of this workspace", e.Name)
}

// Report is what an import of an agent's records did.
type Report struct {
	Agent string `json:"agent"`
	// Files is how many records had something new; Rewritten how many of
	// them were read again from the start.
	Files     int `json:"files"`
	Rewritten int `json:"rewritten"`
	// Uses and Views were recorded.
	Uses  int `json:"uses"`
	Views int `json:"views"`
	// Unknown events named no visible skill of the catalog (a plugin's
	// skill, a personal one, a SKILL.md outside the workspace's targets);
	// UnknownNames lists the first of them, sorted.
	Unknown      int      `json:"unknown"`
	UnknownNames []string `json:"unknown_names"`
	// Hooked events were recorded already, as they happened, by the
	// agent's hook; they are not counted again.
	Hooked int `json:"hooked"`
	// Duplicates are calls counted before, by an earlier import or from
	// another record holding the same call (a resumed or forked session, a
	// rewritten transcript), or by the workspace this one is nested in
	// while its folder was no workspace; they are not counted again.
	Duplicates int `json:"duplicates"`
	// Malformed and TooLong lines were skipped, the first malformed ones
	// at MalformedAt (a file and an offset or row); Before events were
	// older than --since.
	Malformed   int      `json:"malformed"`
	MalformedAt []string `json:"malformed_at"`
	TooLong     int      `json:"too_long"`
	Before      int      `json:"before_since"`
	// Future events were dated more than MaxAhead past the clock and
	// past the time their records were written: no agent wrote them so,
	// and counted, one would keep its skill from ever going stale and, in
	// the set of calls seen, pass every real call after it over.
	Future int `json:"future"`
	// Unreadable records were passed over this time, with why.
	Unreadable []string `json:"unreadable"`
	// Reactivated are the stale skills a recorded use made active again.
	Reactivated []string `json:"reactivated"`
}

// maxUnknownNames bounds the unknown names a report lists.
const maxUnknownNames = 20

// importLockWait bounds how long an import waits for another.
const importLockWait = 2 * time.Minute

// MaxAhead is how far past the clock an event's time may be (clocks
// differ a little between machines, not by more).
const MaxAhead = 24 * time.Hour

// HookedKeep is how long a call a hook recorded waits in the journal for
// the import that would count it again.
const HookedKeep = 30 * 24 * time.Hour

// Journal is one workspace's record of what was imported: how far each
// agent's records were read (State, at StatePath) and the calls hooks
// reported (Hooked).
type Journal struct {
	// StatePath is the workspace's imported file.
	StatePath string
	Hooked    Hooked
	// Root is the workspace's folder, where the workspace it is nested
	// in is looked for (outerCounted); "" looks for none.
	Root string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

func (j Journal) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

// Import records the skill uses and views the records imp reads hold,
// each at the time the record gives: a use names a skill, a view the
// SKILL.md of one, as rec resolves them; events naming anything else are
// counted as unknown. Events before since (zero: none) are passed over
// for good.
//
// Imports of one workspace serialize on a lock, and each remembers per
// record how far it read, so importing twice counts nothing twice. The
// marks an import reaches are saved first as pending, then its uses are
// recorded with its id, then the marks are taken: an import after a
// crash between any two takes the pending marks when the usage file holds
// that id, and otherwise reads the same events again (settle).
func (j Journal) Import(ctx context.Context, rec Recorder, imp Importer, since time.Time) (*Report, error) {
	if err := atomicfile.MkdirNoFollow(filepath.Dir(j.StatePath), 0o755); err != nil {
		return nil, fmt.Errorf("import usage from %s: %w", imp.Name(), err)
	}
	lock, err := flock.Acquire(ctx, j.StatePath+".lock", importLockWait)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", j.StatePath, err)
	}
	defer lock.Close()
	state, err := LoadState(j.StatePath)
	if err != nil {
		return nil, err
	}
	if err := settle(state, rec, imp.Name()); err != nil {
		return nil, err
	}
	if err := lostState(state, rec, imp.Name(), j.StatePath, since); err != nil {
		return nil, err
	}
	realign, err := olderState(state, rec, imp.Name(), j.StatePath, since)
	if err != nil {
		return nil, err
	}
	lostHooked, err := lostJournal(j.Hooked.Path, rec, imp.Name(), since)
	if err != nil {
		return nil, err
	}
	batch, err := imp.Import(ctx, since, state.Agents[imp.Name()])
	if err != nil {
		return nil, fmt.Errorf("import usage from %s: %w", imp.Name(), err)
	}
	report := &Report{Agent: imp.Name(), Files: batch.Files, Rewritten: batch.Rewritten, Malformed: batch.Malformed,
		TooLong: batch.TooLong, Before: batch.Before, UnknownNames: []string{}, Reactivated: []string{},
		MalformedAt: append([]string{}, batch.MalformedAt...),
		Unreadable:  append([]string{}, batch.Unreadable...)}
	seen := state.Seen[imp.Name()]
	if seen == nil {
		seen = &Seen{}
	}
	now := j.now()
	ahead := recorded(now, batch.Marks).Add(MaxAhead)
	seen.forgetFuture(ahead)
	future := func(ev Event) bool {
		if ev.Written.IsZero() {
			return ev.At.After(ahead)
		}
		// Its own record's time, not the latest of all: one file written
		// far ahead would let every file's future calls count.
		return ev.At.After(recorded(now, Marks{"": {ModTime: ev.Written}}).Add(MaxAhead))
	}
	outer := outerCounted(j.Root, imp.Name())
	// The calls this import counts join the set only once its uses are
	// recorded; until then they are kept apart.
	added := map[string]time.Time{}
	counted := func(id string, at time.Time) bool {
		_, ok := added[seenKey(id)]
		return ok || seen.has(id, at) || outer(id, at)
	}
	var ids []string
	for _, ev := range batch.Events {
		if ev.ID != "" && !future(ev) && !seen.has(ev.ID, ev.At) {
			ids = append(ids, ev.ID)
		}
	}
	// Held until the marks are saved: a hook reporting one of these calls
	// meanwhile waits, then finds it counted.
	hold, err := j.Hooked.Hold(ctx)
	if err != nil {
		return nil, err
	}
	defer hold.Close()
	// Read under the hold: no hook records meanwhile.
	lastHook, err := rec.LastImport(HookMark)
	if err != nil {
		lastHook = "" // a usage file that cannot be read fails the write
	}
	lastCall, lastSeq, lastAt := parseMarkerAt(lastHook)
	if first, final, behind := hold.log.missing(lastSeq); behind && (strings.HasPrefix(lastCall, imp.Name()+" ") || hold.log.hasAgent(imp.Name())) {
		if since.IsZero() {
			return nil, journalBehind(j.Hooked.Path, imp.Name(), lastCall, lastSeq, lastAt, first, final, batch.Events)
		}
		hold.realign(lastSeq)
	}
	if lostHooked {
		// Begun again, so that the next import knows it was not lost.
		if err := j.Hooked.begin(); err != nil {
			return nil, err
		}
		hold.realign(lastSeq)
	}
	hooked := hold.Recorded(imp.Name(), ids)
	// The last call a hook recorded is named in the usage file too: a
	// hook stopped before it journaled the call leaves it there alone.
	if lastCall != "" {
		for _, id := range ids {
			if hookMarker(imp.Name(), id) == lastCall {
				hooked[id] = true
			}
		}
	}
	unknown := map[string]bool{}
	var uses []Use
	for _, ev := range batch.Events {
		if future(ev) {
			report.Future++
			continue
		}
		if ev.ID != "" {
			if counted(ev.ID, ev.At) {
				report.Duplicates++
				continue
			}
			added[seenKey(ev.ID)] = ev.At.UTC()
			if hooked[ev.ID] {
				report.Hooked++
				continue
			}
		}
		name, ok := rec.Resolve(imp.Name(), ev)
		switch {
		case !ok && ev.Source == FromSlash:
			// Most slash commands are the agent's own (/clear, /model):
			// only those naming a workspace skill are uses.
			continue
		case !ok:
			report.Unknown++
			unknown[cmp.Or(ev.Skill, ev.Path)] = true
			continue
		case ev.View:
			report.Views++
		default:
			report.Uses++
		}
		uses = append(uses, Use{Skill: name, View: ev.View, At: ev.At, From: cmp.Or(ev.Source, FromImport)})
	}
	state.Seen[imp.Name()] = seen
	for name := range unknown {
		report.UnknownNames = append(report.UnknownNames, name)
	}
	sort.Strings(report.UnknownNames)
	if len(report.UnknownNames) > maxUnknownNames {
		report.UnknownNames = report.UnknownNames[:maxUnknownNames]
	}
	var id string
	if len(uses) > 0 || realign {
		// With none, an import begun again with since still names
		// itself, so that the next one finds the usage file and the
		// marks agree.
		id = importID(state.Last[imp.Name()], rec, imp.Name())
		state.Pending[imp.Name()] = &Pending{ID: id, Marks: batch.Marks, Added: added}
		if err := state.Save(j.StatePath); err != nil {
			return nil, fmt.Errorf("save how far the import read: %w", err)
		}
		re, err := rec.Record(ctx, uses, imp.Name(), id)
		if err != nil {
			return nil, err
		}
		report.Reactivated = append(report.Reactivated, re...)
	}
	state.commit(imp.Name(), batch.Marks, added, id)
	if err := state.Save(j.StatePath); err != nil {
		return report, fmt.Errorf("save how far the import read (the events are recorded, and the next import knows it): %w", err)
	}
	// Only now: the marks say these calls were seen. Should the rewrite
	// fail, they stay in the journal until they age out, which counts
	// nothing twice: the import is done.
	_ = hold.Take(imp.Name(), hooked, j.now())
	return report, nil
}

// recorded is the moment calls are judged against (MaxAhead): now, or the
// latest time a record read was written, if later. An agent writes a
// call's record after the call, by the machine's clock: a record written
// past now was written before the clock stepped back (a VM restored from
// a snapshot, a machine before its first NTP sync), and its calls are no
// less real. Judged by the clock alone they were passed over, and lost, as
// the marks move past them.
func recorded(now time.Time, marks Marks) time.Time {
	for _, m := range marks {
		if m.ModTime.After(now) {
			now = m.ModTime
		}
	}
	return now
}

// outerCounted returns whether the workspace the one at root is nested
// in counted a call of the agent, by its import (its calls seen) or its
// hook (its journal): a folder that becomes a workspace of its own (a
// config, a sync) was a plain folder of the enclosing one before, whose
// import and hooks counted the calls of the sessions run there; read
// again by the new workspace's imports, they would count twice. Calls
// after the folder became a workspace are its own, and the enclosing one
// no longer reads them (Workspace.Within). A state that cannot be read
// says none.
func outerCounted(root, agent string) func(id string, at time.Time) bool {
	none := func(string, time.Time) bool { return false }
	if root == "" {
		return none
	}
	dir := enclosing(root)
	if dir == "" {
		return none
	}
	l := workspace.New(dir, "")
	state, err := LoadState(l.ImportedFile())
	if err != nil {
		return none
	}
	seen := state.Seen[agent]
	if seen == nil {
		seen = &Seen{}
	}
	hooked := map[string]bool{}
	entries, _ := Hooked{Path: l.HookedFile()}.read()
	for _, e := range entries {
		if e.Agent == agent {
			hooked[e.ID] = true
		}
	}
	return func(id string, _ time.Time) bool {
		if hooked[journalKey(id)] {
			return true
		}
		// By its id alone: the enclosing workspace's floor says nothing
		// of the calls it never read.
		_, ok := seen.IDs[seenKey(id)]
		return ok
	}
}

// settle takes or drops the pending import of the agent that a crash
// left in state (State.Pending): taken when the usage file holds its
// uses, dropped when it does not, so that its records are read again
// from the marks before it. Either way each of its calls counts once.
func settle(state *State, rec Recorder, agent string) error {
	p := state.Pending[agent]
	if p == nil || p.ID == "" {
		delete(state.Pending, agent) // none, or none skillsync wrote
		return nil
	}
	last, err := rec.LastImport(agent)
	if err != nil {
		return fmt.Errorf("an import of %s stopped before it was done, and the usage file does not say whether it counted its calls: %w", agent, err)
	}
	if last == p.ID {
		state.commit(agent, p.Marks, p.Added, p.ID)
	}
	delete(state.Pending, agent)
	return nil
}

// lostState refuses an import of the agent, without since, whose marks
// the state lacks (the imported file deleted, or a backup that brought
// the usage file back alone) while the usage file names an import of
// its records: every import that counts a call saves its marks, so those
// calls are counted, and reading every record from its start would count
// them all again. The caller decides from when with since, as for an
// imported file that does not parse.
func lostState(state *State, rec lastImports, agent, path string, since time.Time) error {
	if _, ok := state.Agents[agent]; ok || !since.IsZero() {
		return nil
	}
	last, err := rec.LastImport(agent)
	if err != nil || last == "" {
		return nil // no import counted here; a usage file that cannot be read fails the write
	}
	return fmt.Errorf("import usage from %s: the usage file holds an import of its records, but %s does not say how far it read (removed, or brought back from another time); run skillsync usage import %s --since the time of the last import: without --since every call on disk is counted again", agent, path, agent)
}

// importID is a new id of an import of agent's records: a number one past
// those of the last import the state and the usage file name, then random
// text, so that olderState tells which of the two files is older.
func importID(last string, rec Recorder, agent string) string {
	n := importSeq(last)
	if named, err := rec.LastImport(agent); err == nil {
		n = max(n, importSeq(named))
	}
	return strconv.FormatUint(n+1, 10) + "-" + rand.Text()
}

// importSeq is the number an import id begins with (importID), 0 for an
// id of an older skillsync.
func importSeq(id string) uint64 {
	num, _, ok := strings.Cut(id, "-")
	n, err := strconv.ParseUint(num, 10, 63)
	if !ok || err != nil {
		return 0
	}
	return n
}

// olderState refuses an import, without since, whose state is older than
// the usage file: the usage file names an import of the agent's records
// after the last the state's marks hold (the imported file brought back
// from a backup alone), and reading on from those marks would count the
// calls of the imports between again. A usage file older than the marks
// (brought back alone) lost what it counted since, and nothing is counted
// twice: the import goes on. With since it goes on, and realign says to
// name the import in the usage file even if it counts no use.
func olderState(state *State, rec lastImports, agent, path string, since time.Time) (realign bool, err error) {
	last := state.Last[agent]
	if last == "" {
		return false, nil // an older skillsync's state, or none counted: not judged
	}
	named, err := rec.LastImport(agent)
	if err != nil || named == "" || named == last || importSeq(named) < importSeq(last) {
		return false, nil // a usage file that cannot be read fails the write
	}
	if !since.IsZero() {
		return true, nil
	}
	return false, fmt.Errorf("import usage from %s: the usage file holds an import of its records (%s) later than the last that %s says how far it read (%s): it was brought back from another time, and reading on from there would count the calls in between again; run skillsync usage import %s --since the time of the last import", agent, named, path, last, agent)
}

// lostJournal refuses an import, without since, when the hooked journal
// is gone while the usage file names a call a hook recorded: the calls
// hooks counted since the last import are not told from the others, and
// the import would count them again. Hooks begin the journal with their
// first call and imports only rewrite it, so only a removal takes it.
// With since it reports lost, and the import begins the journal again.
// Only the import of the agent whose hook the usage file names is
// refused, as for a journal that lacks calls (journalBehind): the others'
// calls (Codex's, OpenCode's) no hook journals, and refused, their
// records were read from --since only, the calls before it lost; let to
// realign the journal with since, one hid its loss from the import of the
// agent it lost calls of, which then counted them again.
func lostJournal(path string, rec lastImports, agent string, since time.Time) (lost bool, err error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	last, err := rec.LastImport(HookMark)
	if err != nil || last == "" {
		return false, nil // no hook recorded a call here
	}
	if call, _ := parseMarker(last); !strings.HasPrefix(call, agent+" ") {
		return false, nil
	}
	if !since.IsZero() {
		return true, nil
	}
	return false, fmt.Errorf("import usage from %s: the usage file names a call a hook recorded, but %s, the hooks' journal of the calls they counted, is gone (removed); run skillsync usage import %s --since the time it was removed: without --since the calls hooks counted since the last import are counted again", agent, path, agent)
}

// journalBehind is the error of an import, without since, of the agent's
// records while the hooks' journal at path lacks the calls numbered first
// to final of those hooks counted before the last, lastCall numbered
// last, which the usage file names: brought back from a backup older than
// the usage file, replaced by another machine's, removed and begun again
// by a hook, too full (maxHooked) to take them, or rewritten by the
// import of a skillsync before numbered calls, whose rewrite drops the
// numbers (and the floor). The calls hooks counted since the last import are not
// told from the others, and would count again. Every call a hook counted
// was made by the last one's time at the latest: from just after it
// (events says when, if they hold it, else lastAt, the hook's time the
// usage file names with it) nothing is counted twice.
func journalBehind(path, agent, lastCall string, last seqRef, lastAt time.Time, first, final uint64, events []Event) error {
	when := "TIME"
	if !lastAt.IsZero() {
		// The hook's own time, where the records this import reads no
		// longer hold the call (an import since read past it).
		when = lastAt.Truncate(time.Millisecond).Add(time.Millisecond).Format(time.RFC3339Nano)
	}
	for _, ev := range events {
		if ev.ID != "" && hookMarker(agent, ev.ID) == lastCall {
			// Just after it: agents write times to the millisecond.
			when = ev.At.UTC().Truncate(time.Millisecond).Add(time.Millisecond).Format(time.RFC3339Nano)
			break
		}
	}
	return fmt.Errorf("import usage from %s: %s, the hooks' journal of the calls they counted, lacks calls %d to %d of the %d the usage file says hooks recorded (journal %s): it is older than the usage file (brought back from a backup, replaced by another machine's, or removed and begun again), was too full to take them, or was rewritten by the import of an older skillsync, which drops the numbers (upgrade every skillsync that runs this workspace's hooks or imports); run skillsync usage import %s --since %s (just after the last call a hook recorded): without --since the calls hooks counted since the last import are counted again, and calls before then no hook recorded are passed over", agent, path, first, final, last.N, last.Journal, agent, when)
}

// HookMark is the key under which the usage file names the last call a
// hook recorded (Recorder.Record, LastImport): hooks record one at a
// time, under the journal's lock, and the mark is written with the use,
// so a call whose hook stopped before journaling it is still known.
const HookMark = "hook"

// RecordHook records one event the hook of the agent keyed key reported
// as it happened, at the event's time or now: a use of the skill it names
// or a view of the SKILL.md it read. It returns the skill's name, or an
// *UnknownError when the event names no skill of the workspace. A call
// whose id the hook reported before is not recorded again (dup). The
// call's id goes to the hooked journal, so an import of the agent's
// records does not count it again; warn is told when the journal cannot
// be used (the use is counted).
func (j Journal) RecordHook(ctx context.Context, rec Recorder, key string, ev Event, warn func(error)) (name string, dup bool, err error) {
	name, ok := rec.Resolve(key, ev)
	if !ok {
		return "", false, &UnknownError{Name: cmp.Or(ev.Skill, ev.Path)}
	}
	// The hook runs as the call is made: a time far ahead of the clock
	// is not the call's.
	at := ev.At
	if now := j.now(); at.IsZero() || at.After(now.Add(MaxAhead)) {
		at = now
	}
	// A call an import counted already is not counted again either. The
	// marks file is replaced whole when it is written, so it reads
	// consistently without the import's lock; an import holds the
	// journal's until its marks are saved, and once asks under that lock.
	// A call an import that stopped may have counted is taken as counted:
	// should that import not have counted it, the next one will, from the
	// agent's records.
	marker := hookMarker(key, ev.ID)
	// last is the call the usage file names as the last a hook recorded,
	// read under the journal's lock (counted runs there, before record).
	var last string
	counted := func() bool {
		last, _ = rec.LastImport(HookMark)
		if call, _ := parseMarker(last); call == marker {
			return true // recorded by a hook that stopped before journaling it
		}
		state, err := LoadState(j.StatePath)
		if err != nil {
			return false
		}
		k := seenKey(ev.ID)
		if p := state.Pending[key]; p != nil {
			if _, ok := p.Added[k]; ok {
				return true
			}
		}
		seen := state.Seen[key]
		if seen == nil {
			return false
		}
		_, ok := seen.IDs[k]
		return ok
	}
	dup, journalErr, err := j.Hooked.once(ctx, key, ev.ID, at, counted, func(log journalLog) (seqRef, error) {
		mark, named := HookMark, ""
		var seq seqRef
		if ev.ID != "" {
			_, lastSeq := parseMarker(last)
			seq = log.next(lastSeq)
			named = numbered(key, ev.ID, seq, at)
			if last != "" {
				// This use's mark replaces the name of the last hook's
				// call: journaled now if that hook stopped before
				// journaling it.
				_ = j.Hooked.keep(last, at)
			}
		} else {
			mark = "" // no call to name
		}
		_, err := rec.Record(ctx, []Use{{Skill: name, View: ev.View, At: at, From: cmp.Or(ev.Source, FromHook)}}, mark, named)
		return seq, err
	})
	if err != nil {
		return "", false, err
	}
	if journalErr != nil && warn != nil {
		warn(fmt.Errorf("recorded the use of %s, not journaled: unless the next hook journals it, an import of %s's records stops, saying so, rather than count it again: %w", name, key, journalErr))
	}
	return name, dup, nil
}

// errNoImporter is wrapped when a registration has no importer.
var errNoImporter = errors.New("no records of this agent are read")
