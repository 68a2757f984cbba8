package drafts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/realdir"
	"github.com/skillsync/skillsync/skill"
)

// A promotion that changes a draft's SKILL.md first (a canary's fields)
// keeps the SKILL.md it replaced in a journal beside the draft's lock,
// <locks>/<key>.staged, until the promotion ends either way. A process
// killed in between leaves the journal, and whoever takes the draft's
// lock next puts the SKILL.md back: otherwise the draft would keep
// fields its author never wrote, and a later promotion without --canary
// would still reach only the canary's hosts.
//
// The journal is the SHA-256 of the edited SKILL.md in hex, the draft's
// name as the promotion spelled it (its lock is case-insensitive, a
// folder may not be), each on a line, then the SKILL.md as it was. The old one is put back only while the
// draft's SKILL.md is still the edited one: a draft that moved on (it
// was promoted, or its author changed it since) is left as it is.

// maxSkillMD bounds the SKILL.md a promotion edits, and so a journal;
// maxNameBytes bounds the name it holds (skill.ValidName allows no more).
const (
	maxSkillMD   = 1 << 20
	maxNameBytes = 255
)

func (d *Folder) journal(name string) string {
	return filepath.Join(d.locks, lockKey(name)+".staged")
}

// writeJournal records, before the edit is written, what to put back.
func (d *Folder) writeJournal(name string, old, edited []byte) error {
	sum := sha256.Sum256(edited)
	data := make([]byte, 0, 2*len(sum)+len(name)+2+len(old))
	data = hex.AppendEncode(data, sum[:])
	data = append(data, '\n')
	data = append(data, name...)
	data = append(data, '\n')
	data = append(data, old...)
	if err := atomicfile.WriteFile(d.journal(name), data, 0o644); err != nil {
		return fmt.Errorf("draft %s: keep its SKILL.md before the edit: %w", name, err)
	}
	return nil
}

// dropJournal removes the journal of a promotion that ended.
func (d *Folder) dropJournal(name string) error {
	if err := os.Remove(d.journal(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("draft %s: %w", name, err)
	}
	return nil
}

// recoverJournal puts back the SKILL.md of a promotion that was killed
// after its edit, under the draft's lock. A journal that cannot be read
// is kept, and the error names it: the draft's own SKILL.md may be in it.
// A draft's folder that is a link is not written through.
func (d *Folder) recoverJournal(name string) error {
	path := d.journal(name)
	data, err := atomicfile.ReadBounded(path, maxSkillMD+2*sha256.Size+maxNameBytes+2)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("draft %s: read the SKILL.md an interrupted promotion kept: %w", name, err)
	}
	want, rest, ok := bytes.Cut(data, []byte{'\n'})
	staged, old, ok2 := bytes.Cut(rest, []byte{'\n'})
	if !ok || !ok2 || len(want) != 2*sha256.Size || !skill.ValidName(string(staged)) || lockKey(string(staged)) != lockKey(name) {
		return fmt.Errorf("draft %s: %s is not a journal skillsync wrote; look at it, then delete it", name, path)
	}
	// The draft's folder is checked as stage checks it: a link standing
	// for it (planted with the journal, or swapped in since) is never
	// written through, and its SKILL.md is left where it leads.
	dir := filepath.Join(d.dir, string(staged))
	skillMD := filepath.Join(dir, "SKILL.md")
	now, err := atomicfile.ReadBounded(skillMD, maxSkillMD)
	if err == nil && realdir.Check(dir) == nil {
		sum := sha256.Sum256(now)
		if hex.EncodeToString(sum[:]) == string(want) {
			if err := atomicfile.WriteFile(skillMD, old, 0o644); err != nil {
				return fmt.Errorf("draft %s: put back the SKILL.md an interrupted promotion edited: %w", name, err)
			}
		}
	}
	return d.dropJournal(name)
}
