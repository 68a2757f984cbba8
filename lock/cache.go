package lock

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/workspace"
)

// FromCache records sources as the cache m now holds them. A source that
// failed (none in reached) keeps what old said, or is left out. A source that
// synced with some skills left at their last good files has no revision
// in the cache (the next sync looks at it again); it is locked at the
// revision the sync reached, with the hashes the cache holds, so the lock
// and the cache agree. base is the config's folder, as for Describe.
//
// A source that old already locks as the cache holds it is old's own
// *Source in the result, as is a failed one: callers change neither.
//
// A source kept from a Legacy lock keeps hashes of the first kind: the
// lock is then version 1 still, which tells every reader not to compare
// its hashes, until a sync that brings every source writes version 2.
//
// A skill this machine archived (the record's Excluded) is locked all the
// same, since the lock is the team's and the archive this machine's own:
// at the hash archived gives (source, then name: what this sync read of
// it), else at old's (the sync did not read it: its source did not move,
// or the read could not reach it). Only a skill of neither is left out.
func FromCache(sources []config.Source, base string, m *materialize.Manifest, old *File, reached map[string]string, archived map[string]map[string]string) *File {
	l := New()
	for _, s := range sources {
		rec, ok := m.Sources[s.Name]
		got, synced := reached[s.Name]
		rev := ""
		if ok && synced {
			// A failed source's cache still holds what an earlier sync
			// brought, maybe under another ref or URL than the config now
			// names: only old says which.
			rev = cmp.Or(rec.Revision, got)
		}
		if rev == "" {
			if prev, had := old.Sources[s.Name]; had {
				l.Sources[s.Name] = prev
				if old.Legacy() && len(prev.Skills) > 0 {
					l.Version = 1
				}
			}
			continue
		}
		ls := Describe(s, base)
		ls.Revision = rev
		prev := old.Sources[s.Name]
		if prev != nil && locks(prev, ls, rec, archived[s.Name]) {
			// As it was: the common case, and with thousands of skills a
			// map of hashes in hex built only to be found equal.
			l.Sources[s.Name] = prev
			continue
		}
		for name, sk := range rec.Skills {
			ls.Skills[name] = sk.Hash.String()
		}
		for _, name := range rec.Excluded {
			if hash, ok := archived[s.Name][name]; ok {
				ls.Skills[name] = hash
			} else if hash, ok := prev.skill(name); ok {
				ls.Skills[name] = hash
			}
		}
		l.Sources[s.Name] = ls
	}
	return l
}

// locks reports whether prev already locks what ls describes with the
// skills rec holds: the same type, location and revision, and every
// skill's hash, no more and no fewer, the archived ones (Excluded) at the
// hash this sync read of them (archived), else as prev has them.
func locks(prev, ls *Source, rec *materialize.SourceRecord, archived map[string]string) bool {
	if prev.Type != ls.Type || prev.URL != ls.URL || prev.Ref != ls.Ref || prev.Revision != ls.Revision {
		return false
	}
	want := len(rec.Skills)
	for _, name := range rec.Excluded {
		hash, had := prev.Skills[name]
		if read, ok := archived[name]; ok && read != hash {
			return false
		}
		if had {
			want++
		}
	}
	if len(prev.Skills) != want {
		return false
	}
	for name, sk := range rec.Skills {
		if hash, ok := prev.Skills[name]; !ok || !isHex(sk.Hash, hash) {
			return false
		}
	}
	return true
}

// isHex reports whether s is h as Hash.String writes it, without
// making that string.
func isHex(h materialize.Hash, s string) bool {
	var buf [2 * len(h)]byte
	hex.Encode(buf[:], h[:])
	return string(buf[:]) == s
}

// Differences lists the skills whose cached hash in m differs from the
// lock's: missing from the cache, modified (not told for a Legacy lock),
// or cached but not locked.
func (f *File) Differences(m *materialize.Manifest) []materialize.Difference {
	var diffs []materialize.Difference
	add := func(source, name string, kind materialize.DiffKind) {
		diffs = append(diffs, materialize.Difference{Path: fmt.Sprintf("%s/%s (%s)", source, name, workspace.LockName), Kind: kind})
	}
	for source, ls := range f.Sources {
		rec := m.Sources[source]
		for name, hash := range ls.Skills {
			switch {
			case rec != nil && rec.Skills[name] == nil && slices.Contains(rec.Excluded, name):
				// Archived on this machine: locked for the team, not cached.
			case rec == nil || rec.Skills[name] == nil:
				add(source, name, materialize.Missing)
			case rec.Skills[name].Hash.String() != hash && !f.Legacy():
				// A version-1 lock's hashes are of the first kind: only
				// which skills it names is compared, until a sync writes
				// version 2.
				add(source, name, materialize.Modified)
			}
		}
		if rec == nil {
			continue
		}
		for name := range rec.Skills {
			if _, ok := ls.Skills[name]; !ok {
				add(source, name, materialize.Extra)
			}
		}
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].Path < diffs[j].Path })
	return diffs
}

// refusedError is a skill a frozen sync would not write.
type refusedError struct{}

func (refusedError) Error() string { return "refused by --frozen" }

// IsRefused reports whether err is a skill a FrozenCheck refused: its
// difference is in the frozen diff already.
func IsRefused(err error) bool {
	var r refusedError
	return errors.As(err, &r)
}

// FrozenCheck is the cache's check of each skill of source in a frozen
// sync: it refuses a skill whose hash differs from locked's (or that
// locked does not have), and adds the difference to diff.
func FrozenCheck(source string, locked *Source, diff *[]string) func(name string, hash materialize.Hash) error {
	return func(name string, hash materialize.Hash) error {
		want, ok := locked.Skills[name]
		switch {
		case !ok:
			*diff = append(*diff, fmt.Sprintf("+ skill %s/%s is not in the lock", source, name))
		case want != hash.String():
			*diff = append(*diff, fmt.Sprintf("~ skill %s/%s: lock has %s, content hashes to %s", source, name, short(want), hash.Short()))
		default:
			return nil
		}
		return refusedError{}
	}
}

// short is a hash cut to the 12 characters messages show.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// FrozenError is a sync --frozen whose config or content does not match
// the lock file. Diff has one line per difference; Fix, when set, is what
// to do instead of moving the lock (there is no lock to move).
type FrozenError struct {
	Diff []string
	Fix  string
}

func (e *FrozenError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "run skillsync update to move the lock, or restore the config"
	}
	return "the lock file does not match:\n  " + strings.Join(e.Diff, "\n  ") + "\n" + fix
}

// skill returns the hash s locks for the skill name; s may be nil.
func (s *Source) skill(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	hash, ok := s.Skills[name]
	return hash, ok
}
