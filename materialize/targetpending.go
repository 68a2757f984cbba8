package materialize

import (
	"encoding/json"
	"fmt"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/internal/platform"
)

// A target sync stopped halfway (kill -9, a power cut) leaves some skills
// swapped to their new versions while its record, written last, still
// names the old ones. The next sync took each such copy, skillsync's
// own, for the user's edit of the recorded version and moved it aside
// (preserved), and took a new skill's folder the record does not name
// for the user's (a conflict). So the marker a target sync writes before
// its first change in the folder (writer.markLive) lists the entries it
// is about to put live (pendingMark), and a sync that finds the marker
// takes a copy that is exactly one of them as skillsync's own, as it
// takes one that is exactly what the record says. The marker is written
// only by a sync that changes something, and read only after one stopped
// halfway: a sync with nothing new reads and writes no more than before.

// pendingMark is what a target's marker holds.
type pendingMark struct {
	Note   string                  `json:"note"`
	Skills map[string]*TargetEntry `json:"skills"`
}

const pendingNote = "a sync is changing this folder; if it stopped halfway, the next one checks every file, and takes a copy that is exactly one of these entries as its own"

// readPending reads the marker of a target sync that stopped halfway in
// the folder tree holds: the entries it was putting live. nil when it
// lists none, or when it is not one to use (an older skillsync's line, a
// name that is not one safe path component): the marker is as
// untrusted as the record.
func readPending(tree *platform.Tree) map[string]*TargetEntry {
	data, _, err := atomicfile.ReadBoundedIn(tree, targetDirty, jsonfile.MaxSize)
	if err != nil {
		return nil
	}
	var m pendingMark
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	if r := (TargetRecord{Version: TargetRecordVersion, Skills: m.Skills}); r.Validate() != nil {
		return nil
	}
	return m.Skills
}

// adoptPending makes rec, a target's record, name each skill pending
// holds whose name and folder rec has not: a copy a sync stopped halfway
// placed there is skillsync's. It returns pending's entries by folder,
// the other version each folder may hold.
func adoptPending(rec *TargetRecord, pending map[string]*TargetEntry) map[string]*TargetEntry {
	byFolder := map[string]*TargetEntry{}
	taken := map[string]bool{}
	for name, e := range rec.Skills {
		taken[e.folder(name)] = true
	}
	for _, name := range sortedNames(pending) {
		e := pending[name]
		byFolder[e.folder(name)] = e
		if _, had := rec.Skills[name]; !had && !taken[e.folder(name)] {
			rec.Skills[name] = e
			taken[e.folder(name)] = true
		}
	}
	return byFolder
}

// markPending has the marker this sync writes before its first change
// list what next puts live that rec, the record read, does not say, and
// what pending (a sync stopped halfway before this one) was putting live
// that this sync leaves as it is: a copy of those may be live too.
func (w *writer) markPending(rec, next *TargetRecord, pending map[string]*TargetEntry) error {
	m := pendingMark{Note: pendingNote, Skills: map[string]*TargetEntry{}}
	used := map[string]bool{}
	for name, e := range next.Skills {
		if prev := rec.Skills[name]; prev == nil || !sameEntry(prev, e) {
			m.Skills[name] = e
			used[e.folder(name)] = true
		}
	}
	for _, name := range sortedNames(pending) {
		e := pending[name]
		if _, ok := m.Skills[name]; !ok && !used[e.folder(name)] {
			m.Skills[name] = e
			used[e.folder(name)] = true
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("mark the change: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.markBody = append(body, '\n')
	if w.marked {
		// Marked already (a journal found in staging): the marker says
		// it now.
		if err := w.dest.writeFile(w.marker, w.markBody, 0o644); err != nil {
			return fmt.Errorf("mark the change: %w", err)
		}
	}
	return nil
}

// sameEntry reports whether a and b place the same thing in the same
// folder.
func sameEntry(a, b *TargetEntry) bool {
	return a.Hash == b.Hash && a.Mode == b.Mode && a.Link == b.Link && a.Folder == b.Folder
}
