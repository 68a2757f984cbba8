package agent

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/internal/platform"
)

// Hooked is the journal of the tool calls an agent's hook recorded as
// they happened (skillsync use --hook), one JSON object a line. An import
// of the same agent's records claims them, so a call the hook counted is
// not counted again from the transcript. The journal holds calls no
// import has seen yet, and none older than Keep; a call an import counted
// stays only where the import could not rewrite the journal, and is then
// found counted by the import's marks too. Each call is numbered
// (seqRef), and the usage file names the last with its number, so a
// journal older than the usage file is told (journalLog.missing).
type Hooked struct {
	Path string
	// Keep is how long an unclaimed call is kept: a transcript deleted
	// before it was imported never claims its calls.
	Keep time.Duration
}

// hookedEntry is one line of the journal. Journal and Seq number the
// call among those the hooks of this workspace recorded (seqRef); an
// older skillsync wrote none.
type hookedEntry struct {
	Agent   string    `json:"agent"`
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
	Journal string    `json:"journal,omitempty"`
	Seq     uint64    `json:"seq,omitempty"`
}

// hookedLine is any line of the journal: an entry, or the floor an
// import leaves when it rewrites the journal (Take): every call of
// Journal numbered up to Floor was journaled, whether or not its line is
// still there.
type hookedLine struct {
	hookedEntry
	Floor *uint64 `json:"floor,omitempty"`
}

// hookedFloor is the floor line of a journal.
type hookedFloor struct {
	Journal string `json:"journal"`
	Floor   uint64 `json:"floor"`
}

// maxHooked bounds the journal: past it, hooks add no more lines until
// an import claims them or they age out. The calls not journaled leave a
// gap in the journal's numbers (seqRef), and the import refuses, as for a
// journal brought back from a backup, rather than count them twice.
const maxHooked = 4 << 20

// maxID bounds a tool call id.
const maxID = 128

// hookedWait bounds how long an import waits for the journal.
const hookedWait = 5 * time.Second

// hookWait bounds how long a hook waits for the journal, where its
// context lets it wait that long: longer than an import holding the
// journal may wait for the usage file (curator's two minutes). The hook
// of cmd/skillsync gives up sooner (its agent waits for it), and a hook
// that gives up journals its call without the lock (once). A call an
// import has read but not yet saved as pending when the hook gives up is
// counted by both (docs/usage.md says so).
const hookWait = 2*time.Minute + 10*time.Second

// journalKey is the key a call id is journaled under: the id itself when
// it can be kept as it is, else its hash (seenKey), so that a call with a
// long or unprintable id is still counted once.
func journalKey(id string) string {
	if validID(id) {
		return id
	}
	return seenKey(id)
}

// validID reports whether id can be kept: short, printable ASCII.
func validID(id string) bool {
	if id == "" || len(id) > maxID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// Add appends a call the hook of agent recorded at at. An id that is
// empty, too long or not printable is not kept. The file is opened
// without following a link.
func (h Hooked) Add(ctx context.Context, agent, id string, at time.Time) error {
	_, journalErr, err := h.once(ctx, agent, id, at, nil, func(log journalLog) (seqRef, error) { return log.next(seqRef{}), nil })
	return errors.Join(journalErr, err)
}

// once records the call id the hook of agent reported at at, once: under
// the journal's lock it runs record unless the journal holds the call
// already, or counted (nil: never) says an import counted it (dup), then
// journals it under the number record gave it (seqRef), record being
// handed what the journal holds to number it from. counted is asked
// under the lock an import holds from its look at the journal until its
// marks are saved (Hold), so a call the import is counting is found
// counted. An id too long or not printable is
// journaled by its hash (journalKey); an empty one, or an agent name that
// cannot be kept, is recorded with no check. A journal that cannot be
// locked in time is written without the lock. A journal that cannot be
// read or written does not stop the call from being recorded: journalErr
// says what failed, and the gap left in the journal's numbers stops the
// next import (journalBehind) unless the next hook journals the call
// (keep).
func (h Hooked) once(ctx context.Context, agent, id string, at time.Time, counted func() bool, record func(journalLog) (seqRef, error)) (dup bool, journalErr, err error) {
	if id == "" || !validID(agent) {
		_, err := record(journalLog{})
		return false, nil, err
	}
	id = journalKey(id)
	if counted == nil {
		counted = func() bool { return false }
	}
	// Its lock and the journal would be made where the link leads.
	if err := LayerLink(filepath.Dir(h.Path)); err != nil {
		return false, nil, err
	}
	lock, lerr := flock.Acquire(ctx, h.Path+".lock", hookWait)
	if lerr != nil {
		if counted() {
			return true, nil, nil
		}
		// Begun before the use is recorded: a journal missing while the
		// usage file names a hook's call is one removed (lostJournal).
		_ = h.begin()
		// Numbered from the journal read unlocked, as may be another
		// hook's call: one holding the lock, or another that could not
		// take it, numbered from the same journal and names its call in
		// the usage file over this one's. Named there alone, this call
		// was lost with no gap in the numbers, and the import counted it
		// again: it is journaled without the lock (appendUnlocked).
		log, _ := h.readLog()
		seq, err := record(log)
		if err != nil {
			return false, fmt.Errorf("lock %s: %w", h.Path, lerr), err
		}
		if aerr := h.appendUnlocked(ctx, agent, id, at, seq); aerr != nil {
			return false, fmt.Errorf("lock %s: %w; %w", h.Path, lerr, aerr), nil
		}
		return false, nil, nil
	}
	defer lock.Close()
	log, rerr := h.readLog()
	for _, e := range log.entries {
		if e.Agent == agent && e.ID == id {
			return true, nil, nil
		}
	}
	if counted() {
		return true, nil, nil
	}
	// The journal is begun before the use is recorded, so that a hook
	// stopped between the two (its call named in the usage file alone)
	// leaves no missing journal, which only a removal may (lostJournal).
	// One that cannot be begun fails its append below, as it did.
	_ = h.begin()
	seq, err := record(log)
	if err != nil {
		return false, nil, err
	}
	if rerr != nil {
		return false, rerr, nil
	}
	return false, h.appendEntry(agent, id, at, seq), nil
}

// appendEntry appends one entry; the caller holds the lock, or passes
// over a line an import's rewrite leaves out (keep: the gap in the
// numbers stops the import).
func (h Hooked) appendEntry(agent, id string, at time.Time, seq seqRef) error {
	_, _, err := h.appendOnce(agent, id, at, seq, false)
	return err
}

// appendUnlocked appends the entry of a hook that could not take the
// lock (once), in one write. An import rewriting the journal meanwhile
// (Take) reads it again first, and may have read it before the line was
// written, then put a file without it in its place: a seal (sealLine)
// before the line says so, and once the import is done (its lock) the
// line is written again where the file written to was replaced.
func (h Hooked) appendUnlocked(ctx context.Context, agent, id string, at time.Time, seq seqRef) error {
	written, sealed, err := h.appendOnce(agent, id, at, seq, true)
	if err != nil || !sealed {
		return err
	}
	// The hook's own time may be over: the import's rewrite is a
	// moment's work, bounded as an import's wait is.
	lock, err := flock.Acquire(context.WithoutCancel(ctx), h.Path+".lock", hookedWait)
	if err != nil {
		return fmt.Errorf("lock %s: %w; an import rewriting it may have left the call out", h.Path, err)
	}
	defer lock.Close()
	if named, err := os.Lstat(h.Path); err != nil || os.SameFile(written, named) {
		return nil // not replaced (the rewrite failed), or removed since
	}
	return h.appendEntry(agent, id, at, seq)
}

// sealLine is the line Take appends to the journal before it reads it
// to rewrite it (appendUnlocked). No entry, it is dropped as the journal
// is read; stale, where the rewrite failed, it costs a locked-out hook a
// wait for the lock.
const sealLine = `{"sealed":true}`

// seal appends sealLine to the journal; the caller holds the lock.
func (h Hooked) seal() {
	f, err := platform.OpenFile(h.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return
	}
	// On a line of its own, after a line a killed hook cut short.
	_, _ = f.Write([]byte("\n" + sealLine + "\n"))
}

// appendOnce appends one entry and returns the file written to; with
// check, sealed says whether a seal comes before the line in it (or the
// line is not found there).
func (h Hooked) appendOnce(agent, id string, at time.Time, seq seqRef, check bool) (written os.FileInfo, sealed bool, err error) {
	f, err := platform.OpenFile(h.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open %s: %w", h.Path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("stat %s: %w", h.Path, err)
	case !info.Mode().IsRegular():
		return nil, false, fmt.Errorf("%s is not a regular file (%s); the call is not journaled", h.Path, info.Mode().Type())
	case info.Size() > maxHooked:
		return nil, false, fmt.Errorf("%s is %d bytes, over the %d it may hold; the call is not journaled", h.Path, info.Size(), maxHooked)
	}
	if err := atomicfile.OneName(h.Path, info); err != nil {
		return nil, false, fmt.Errorf("%w; the call is not journaled", err)
	}
	line, err := json.Marshal(hookedEntry{Agent: agent, ID: id, At: at.UTC(), Journal: seq.Journal, Seq: seq.N})
	if err != nil {
		return nil, false, err
	}
	// A write cut short (a killed hook) left a line without its end: this
	// entry starts a line of its own rather than be glued to it, unread.
	var last [1]byte
	if info.Size() > 0 {
		if _, err := f.ReadAt(last[:], info.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return nil, false, fmt.Errorf("write %s: %w", h.Path, err)
	}
	if !check {
		return info, false, nil
	}
	return info, sealedBefore(f, bytes.TrimPrefix(line, []byte{'\n'})), nil
}

// sealedBefore reports whether f holds a seal before line, or does not
// hold line.
func sealedBefore(f *os.File, line []byte) bool {
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, maxHooked+64<<10), 64<<10)
	sealed := false
	for {
		l, err := r.ReadSlice('\n')
		switch trimmed := bytes.TrimSuffix(l, []byte{'\n'}); {
		case errors.Is(err, bufio.ErrBufferFull):
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
		case string(trimmed) == sealLine:
			sealed = true
		case bytes.Equal(trimmed, line):
			return sealed
		}
		if err != nil {
			return true
		}
	}
}

// Claim returns which of ids the hook of agent recorded, and takes them
// out of the journal together with the calls older than Keep before now:
// Hold, Recorded and Take at once.
func (h Hooked) Claim(ctx context.Context, agent string, ids []string, now time.Time) (map[string]bool, error) {
	hold, err := h.Hold(ctx)
	if err != nil {
		return nil, err
	}
	defer hold.Close()
	claimed := hold.Recorded(agent, ids)
	return claimed, hold.Take(agent, claimed, now)
}

// Hold is an import's hold on the journal: from Hold until Close no hook
// journals or counts a call (once waits for the lock), so the import can
// count the calls the journal lacks, save its marks, and only then take
// the hook's out. Were they taken first and the count then failed, the
// next import would count them again.
type Hold struct {
	h    Hooked
	lock *flock.Lock
	log  journalLog
	// realigned is the last hook's call the usage file names, which the
	// journal is made to agree with (realign); zero for none.
	realigned seqRef
}

// Hold locks the journal and reads it.
func (h Hooked) Hold(ctx context.Context) (*Hold, error) {
	if err := LayerLink(filepath.Dir(h.Path)); err != nil {
		return nil, err
	}
	lock, err := flock.Acquire(ctx, h.Path+".lock", hookedWait)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", h.Path, err)
	}
	log, err := h.readLog()
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &Hold{h: h, lock: lock, log: log}, nil
}

// Recorded returns which of ids the hook of agent recorded.
func (o *Hold) Recorded(agent string, ids []string) map[string]bool {
	recorded := map[string]bool{}
	if len(o.log.entries) == 0 {
		return recorded
	}
	want := make(map[string]string, len(ids)) // journal key -> id
	for _, id := range ids {
		want[journalKey(id)] = id
	}
	for _, e := range o.log.entries {
		if id, ok := want[e.ID]; ok && e.Agent == agent {
			recorded[id] = true
		}
	}
	return recorded
}

// realign makes the journal agree with the usage file naming last as the
// last hook's call, once an import was told from when to count (since):
// Take writes it whole, its floor at last.
func (o *Hold) realign(last seqRef) {
	o.realigned = last
	if o.realigned.Journal == "" {
		o.realigned.Journal = o.log.identity()
	}
	if o.realigned.Journal == "" {
		o.realigned.Journal = rand.Text()
	}
}

// Take rewrites the journal without the calls of agent in ids and those
// older than Keep before now, beginning it with the floor of the journal
// its calls are numbered in (seqRef): their numbers stay known once their
// lines are gone. The floor stops below the first number the journal
// lacks (journaled), unless realigned. Lines that do not parse are
// dropped.
func (o *Hold) Take(agent string, ids map[string]bool, now time.Time) error {
	data, changed := o.rewrite(agent, ids, now)
	if !changed {
		return nil
	}
	return atomicfile.WriteFile(o.h.Path, data, 0o644)
}

// rewrite is what Take writes in the journal's place, and whether it
// differs from it.
func (o *Hold) rewrite(agent string, ids map[string]bool, now time.Time) ([]byte, bool) {
	keys := make(map[string]bool, len(ids))
	for id := range ids {
		keys[journalKey(id)] = true
	}
	taken := func(e hookedEntry) bool {
		return e.Agent == agent && keys[e.ID] || o.h.Keep > 0 && now.Sub(e.At) > o.h.Keep
	}
	if o.realigned.Journal == "" && !slices.ContainsFunc(o.log.entries, taken) {
		return nil, false
	}
	// Read again: a hook that could not take the lock journaled its call
	// without it (once), and the lines appended since Hold read the
	// journal are kept. Sealed first: one appended after this read is
	// written again by its hook (appendUnlocked).
	o.h.seal()
	log := o.log
	if fresh, err := o.h.readLog(); err == nil {
		log = fresh
	}
	var kept bytes.Buffer
	journal := cmp.Or(o.realigned.Journal, log.identity())
	if floor := max(log.journaled(journal), o.realigned.N); journal != "" && floor > 0 {
		line, _ := json.Marshal(hookedFloor{Journal: journal, Floor: floor})
		kept.Write(append(line, '\n'))
	}
	for _, e := range log.entries {
		if !taken(e) {
			line, _ := json.Marshal(e)
			kept.Write(append(line, '\n'))
		}
	}
	return kept.Bytes(), true
}

// begin creates an empty journal where there is none, and leaves one
// that is there as it is.
func (h Hooked) begin() error {
	f, err := platform.OpenFile(h.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", h.Path, err)
	}
	return f.Close()
}

// Close lets hooks at the journal again.
func (o *Hold) Close() { o.lock.Close() }

// keep journals the call marker names (hookMarker) unless the journal
// holds it already; the caller holds the lock. A marker that names no
// call that can be kept is passed over.
func (h Hooked) keep(marker string, at time.Time) error {
	call, seq := parseMarker(marker)
	agent, id, ok := strings.Cut(call, " ")
	if !ok || !validID(agent) || !validID(id) {
		return nil
	}
	entries, err := h.read()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Agent == agent && e.ID == id {
			return nil
		}
	}
	return h.appendEntry(agent, id, at, seq)
}

// read returns the journal's valid entries; a missing journal is empty.
func (h Hooked) read() ([]hookedEntry, error) {
	log, err := h.readLog()
	return log.entries, err
}

// readLog returns the journal's valid entries and its floor; a missing
// journal is empty.
func (h Hooked) readLog() (journalLog, error) {
	f, err := platform.OpenFile(h.Path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return journalLog{}, nil
	}
	if err != nil {
		return journalLog{}, fmt.Errorf("open %s: %w", h.Path, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return journalLog{}, fmt.Errorf("%s is not a regular file", h.Path)
	}
	var out journalLog
	r := bufio.NewReaderSize(io.LimitReader(f, maxHooked+64<<10), 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line no entry could be: skipped to its end, so the
			// entries after it are kept.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		var e hookedLine
		switch {
		case json.Unmarshal(line, &e) != nil:
		case e.Floor != nil:
			if validID(e.Journal) && *e.Floor < 1<<63 {
				out.floor = hookedFloor{Journal: e.Journal, Floor: *e.Floor}
			}
		case validID(e.ID) && validID(e.Agent):
			if !validID(e.Journal) || e.Seq >= 1<<63 {
				e.Journal, e.Seq = "", 0 // numbered by no skillsync
			}
			out.entries = append(out.entries, e.hookedEntry)
		}
		if err != nil {
			return out, nil
		}
	}
}
