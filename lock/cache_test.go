package lock

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/materialize"
)

func hashOf(b byte) materialize.Hash {
	var h materialize.Hash
	h[0] = b
	return h
}

func TestFromCache(t *testing.T) {
	t.Parallel()
	m := materialize.NewManifest()
	m.Sources["synced"] = &materialize.SourceRecord{Revision: "r2", Skills: map[string]*materialize.SkillRecord{"pdf": {Hash: hashOf(1)}}}
	m.Sources["partial"] = &materialize.SourceRecord{Skills: map[string]*materialize.SkillRecord{"doc": {Hash: hashOf(2)}}}
	// A failed source's cache keeps the files an earlier sync brought,
	// maybe under a ref or URL the config no longer names.
	m.Sources["failed"] = &materialize.SourceRecord{Revision: "r0", Skills: map[string]*materialize.SkillRecord{"x": {Hash: hashOf(4)}}}
	m.Sources["unlocked"] = &materialize.SourceRecord{Revision: "r5", Skills: map[string]*materialize.SkillRecord{"z": {Hash: hashOf(5)}}}
	old := New()
	old.Sources["failed"] = &Source{Type: "git", URL: "file:///up", Ref: "main", Revision: "r0", Skills: map[string]string{"x": "y"}}
	sources := []config.Source{{Name: "synced", Kind: "git"}, {Name: "partial", Kind: "git"}, {Name: "failed", Kind: "git"},
		{Name: "never", Kind: "git"}, {Name: "unlocked", Kind: "git"}}
	l := FromCache(sources, "/ws", m, old, map[string]string{"synced": "r2", "partial": "r9"}, nil)
	if s := l.Sources["synced"]; s == nil || s.Revision != "r2" || s.Skills["pdf"] != hashOf(1).String() {
		t.Errorf("synced: %+v", s)
	}
	if s := l.Sources["partial"]; s == nil || s.Revision != "r9" || s.Skills["doc"] != hashOf(2).String() {
		t.Errorf("a source partly synced is locked at the revision reached: %+v", s)
	}
	if l.Sources["failed"] != old.Sources["failed"] {
		t.Errorf("a failed source keeps what the old lock said: %+v", l.Sources["failed"])
	}
	if _, ok := l.Sources["unlocked"]; ok {
		t.Errorf("a failed source the old lock lacks is locked from the cache, whose config is not known: %+v", l.Sources["unlocked"])
	}
	if _, ok := l.Sources["never"]; ok || len(l.Sources) != 3 {
		t.Errorf("lock %+v", l.Sources)
	}
}

func TestDifferences(t *testing.T) {
	t.Parallel()
	m := materialize.NewManifest()
	m.Sources["team"] = &materialize.SourceRecord{Skills: map[string]*materialize.SkillRecord{
		"same": {Hash: hashOf(1)}, "changed": {Hash: hashOf(2)}, "extra": {Hash: hashOf(3)}}}
	l := New()
	l.Sources["team"] = &Source{Skills: map[string]string{"same": hashOf(1).String(), "changed": hashOf(9).String(), "gone": hashOf(4).String()}}
	l.Sources["other"] = &Source{Skills: map[string]string{"a": hashOf(5).String()}}
	var got []string
	for _, d := range l.Differences(m) {
		got = append(got, fmt.Sprintf("%s %v", d.Path, d.Kind))
	}
	want := []string{
		fmt.Sprintf("other/a (skillsync.lock) %v", materialize.Missing),
		fmt.Sprintf("team/changed (skillsync.lock) %v", materialize.Modified),
		fmt.Sprintf("team/extra (skillsync.lock) %v", materialize.Extra),
		fmt.Sprintf("team/gone (skillsync.lock) %v", materialize.Missing),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFrozenCheck(t *testing.T) {
	t.Parallel()
	var diff []string
	check := FrozenCheck("team", &Source{Skills: map[string]string{"pdf": hashOf(1).String()}}, &diff)
	if err := check("pdf", hashOf(1)); err != nil {
		t.Errorf("the locked hash was refused: %v", err)
	}
	for _, name := range []string{"pdf", "new"} {
		err := check(name, hashOf(2))
		if !IsRefused(err) || !IsRefused(fmt.Errorf("wrapped: %w", err)) {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
	if IsRefused(fmt.Errorf("other")) {
		t.Error("any error is refused")
	}
	if len(diff) != 2 || !strings.HasPrefix(diff[0], "~ skill team/pdf: lock has 010000000000, content hashes to 020000000000") ||
		diff[1] != "+ skill team/new is not in the lock" {
		t.Errorf("diff %q", diff)
	}
}

// A lock read back from disk is the same as the one a sync computes from
// the same cache: a sync with nothing new then writes, and encodes, no
// lock. (reflect.DeepEqual says they differ: Read keeps the kinds.)
func TestSameAfterRead(t *testing.T) {
	t.Parallel()
	m := materialize.NewManifest()
	m.Sources["corpus"] = &materialize.SourceRecord{Revision: "r1", Skills: map[string]*materialize.SkillRecord{"pdf": {Hash: hashOf(1)}}}
	sources := []config.Source{{Name: "corpus", Kind: "git"}}
	path := filepath.Join(t.TempDir(), "skillsync.lock")
	if err := FromCache(sources, "/ws", m, New(), synced("corpus"), nil).Write(path); err != nil {
		t.Fatal(err)
	}
	read, ok, err := Read(path, kinds())
	if err != nil || !ok {
		t.Fatalf("read: %v %v", ok, err)
	}
	if !FromCache(sources, "/ws", m, read, synced("corpus"), nil).Same(read) {
		t.Errorf("the lock read back differs from the one computed again")
	}
	for name, change := range map[string]func(*File){
		"revision":  func(f *File) { f.Sources["corpus"].Revision = "r2" },
		"skill":     func(f *File) { f.Sources["corpus"].Skills["pdf"] = hashOf(2).String() },
		"new skill": func(f *File) { f.Sources["corpus"].Skills["doc"] = hashOf(3).String() },
		"source":    func(f *File) { f.Sources["other"] = &Source{Type: "git"} },
		"nil":       func(f *File) { f.Sources["corpus"] = nil },
		"version":   func(f *File) { f.Version++ },
	} {
		next := FromCache(sources, "/ws", m, read, synced("corpus"), nil)
		if next.Sources["corpus"] != read.Sources["corpus"] {
			t.Fatalf("%s: a source as it was is not the read lock's own", name)
		}
		// A copy to change: FromCache hands back the old lock's own.
		corpus := *next.Sources["corpus"]
		corpus.Skills = maps.Clone(corpus.Skills)
		next.Sources["corpus"] = &corpus
		change(next)
		if next.Same(read) || read.Same(next) {
			t.Errorf("%s: a changed lock is the same", name)
		}
	}
}

// A source the old lock already locks as the cache holds it is kept as
// it was; any difference (where, which revision, a hash, a skill more or
// fewer) gives a new one with the cache's hashes.
func TestFromCacheKeepsOnlyWhatLocksTheCache(t *testing.T) {
	t.Parallel()
	m := materialize.NewManifest()
	m.Sources["corpus"] = &materialize.SourceRecord{Revision: "r1", Skills: map[string]*materialize.SkillRecord{
		"pdf": {Hash: hashOf(1)}, "doc": {Hash: hashOf(0xab)}}}
	sources := []config.Source{{Name: "corpus", Kind: "git"}}
	locked := func() *Source {
		return &Source{Type: "git", Revision: "r1", Skills: map[string]string{"pdf": hashOf(1).String(), "doc": hashOf(0xab).String()}}
	}
	for _, tc := range []struct {
		name   string
		change func(*Source)
		kept   bool
	}{
		{"as it was", func(*Source) {}, true},
		{"type", func(s *Source) { s.Type = "dir" }, false},
		{"url", func(s *Source) { s.URL = "https://example.com/x.git" }, false},
		{"ref", func(s *Source) { s.Ref = "main" }, false},
		{"revision", func(s *Source) { s.Revision = "r0" }, false},
		{"a hash", func(s *Source) { s.Skills["doc"] = hashOf(3).String() }, false},
		{"a hash in upper case", func(s *Source) { s.Skills["doc"] = strings.ToUpper(hashOf(0xab).String()) }, false},
		{"a skill more", func(s *Source) { s.Skills["new"] = hashOf(4).String() }, false},
		{"a skill fewer", func(s *Source) { delete(s.Skills, "doc") }, false},
		{"another skill", func(s *Source) { delete(s.Skills, "doc"); s.Skills["new"] = hashOf(0xab).String() }, false},
	} {
		old := New()
		prev := locked()
		tc.change(prev)
		old.Sources["corpus"] = prev
		got := FromCache(sources, "/ws", m, old, synced("corpus"), nil).Sources["corpus"]
		if kept := got == prev; kept != tc.kept {
			t.Errorf("%s: kept the old source %v, want %v", tc.name, kept, tc.kept)
		}
		if want := locked(); got.Type != want.Type || got.Revision != want.Revision || !maps.Equal(got.Skills, want.Skills) {
			t.Errorf("%s: locked %+v, want %+v", tc.name, got, want)
		}
	}
}

// TestFromCacheLocksArchivedSkills: a skill this machine archived is
// locked at the hash the sync read, else at the old lock's (the sync did
// not read it); with neither it is left out.
func TestFromCacheLocksArchivedSkills(t *testing.T) {
	t.Parallel()
	sources := []config.Source{{Name: "team", Kind: "git"}}
	m := materialize.NewManifest()
	m.Sources["team"] = &materialize.SourceRecord{Revision: "r2", Excluded: []string{"pdf"},
		Skills: map[string]*materialize.SkillRecord{"doc": {Hash: hashOf(1)}}}
	old := New()
	old.Sources["team"] = &Source{Type: "git", Revision: "r2", Skills: map[string]string{"doc": hashOf(1).String(), "pdf": hashOf(2).String()}}
	for _, tc := range []struct {
		name     string
		oldRev   string
		archived map[string]map[string]string
		want     string // pdf's hash, "" for none
	}{
		{"read by the sync", "r1", map[string]map[string]string{"team": {"pdf": hashOf(3).String()}}, hashOf(3).String()},
		{"kept at the same revision", "r2", nil, hashOf(2).String()},
		{"kept, not read at a new revision", "r1", nil, hashOf(2).String()},
		{"never locked", "r1", nil, ""},
	} {
		old.Sources["team"].Revision = tc.oldRev
		if tc.want == "" {
			delete(old.Sources["team"].Skills, "pdf")
		}
		got := FromCache(sources, "/ws", m, old, synced("team"), tc.archived).Sources["team"]
		if got.Skills["pdf"] != tc.want || got.Skills["doc"] != hashOf(1).String() {
			t.Errorf("%s: locked %v, want pdf at %q", tc.name, got.Skills, tc.want)
		}
	}
	if d := old.Differences(m); len(d) != 0 {
		t.Errorf("an archived skill the lock has is a difference: %v", d)
	}
	// A lock that already says all this is kept as it is, not built again
	// (the common case of a sync with nothing new); one the read differs
	// from is not.
	same := New()
	same.Sources["team"] = &Source{Type: "git", Revision: "r2", Skills: map[string]string{"doc": hashOf(1).String(), "pdf": hashOf(2).String()}}
	if got := FromCache(sources, "/ws", m, same, synced("team"), nil).Sources["team"]; got != same.Sources["team"] {
		t.Errorf("a lock that locks the archived skill as it was is built again: %+v", got)
	}
	read := map[string]map[string]string{"team": {"pdf": hashOf(2).String()}}
	if got := FromCache(sources, "/ws", m, same, synced("team"), read).Sources["team"]; got != same.Sources["team"] {
		t.Errorf("a read that agrees with the lock built it again: %+v", got)
	}
	read["team"]["pdf"] = hashOf(3).String()
	if got := FromCache(sources, "/ws", m, same, synced("team"), read).Sources["team"]; got == same.Sources["team"] || got.Skills["pdf"] != hashOf(3).String() {
		t.Errorf("a read that differs from the lock: %+v", got)
	}
}

// synced is FromCache's reached for a sync in which the named sources did
// not fail, at the revisions their cache records hold.
func synced(names ...string) map[string]string {
	reached := map[string]string{}
	for _, n := range names {
		reached[n] = ""
	}
	return reached
}
