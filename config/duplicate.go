package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// duplicate is a source that reads what an earlier one reads: Later and
// Earlier index the config's sources.
type duplicate struct{ Later, Earlier int }

// Place is the ability of settings whose source is neither a remote nor
// a folder (a skill set compiled into the program, tables in a database):
// they say what the source reads, so that two entries reading the same
// are told.
type Place interface {
	// Place returns what the source reads: key is the same for two
	// entries of the kind that read the same, and what names it in a
	// message, without a secret.
	Place() (key, what string)
}

// maxDuplicateChecks bounds the pairs of entries of one repository that
// findDuplicates compares in one config: a config of thousands of entries
// of one repository, each with skills of its own, would otherwise take
// their square. Past it, the rest go unchecked: it is a warning.
const maxDuplicateChecks = 1 << 16

// findDuplicates returns the sources that read what an earlier source
// reads and select skills it selects too, each once, with the first such
// earlier source: the same repository at the same ref and path, or the
// same folder, as add finds a repository already in the config (Entry.names
// with exact), or the same Place of one kind (an embedded skill set, a
// database's schema). Both would sync the same skills, under two source names;
// the later usually wins, so it goes unnoticed until the skill is
// removed from one of them. Two entries that select apart (skills: [pdf]
// and skills: [docx]) are deliberate and are left alone.
func findDuplicates(sources []Source) []duplicate {
	var out []duplicate
	groups := map[string][]int{} // a location's coarse key to its sources
	checks := 0
	for i, s := range sources {
		key, same, ok := locate(s)
		if !ok {
			continue
		}
		for _, j := range groups[key] {
			if checks++; checks > maxDuplicateChecks {
				break
			}
			if same(sources[j]) && overlaps(s, sources[j]) {
				out = append(out, duplicate{Later: i, Earlier: j})
				break
			}
		}
		groups[key] = append(groups[key], i)
	}
	return out
}

// locate is a key that every source reading what s reads shares, and
// whether a source of that key does: for a remote or a folder, the Entry
// that names s as add would write it (the same remoteKey, the same
// folder, then Entry.names), for a Place of a kind, that place. false
// for a source that says none of them.
func locate(s Source) (key string, same func(Source) bool, ok bool) {
	switch st := s.Settings.(type) {
	case Remote:
		ref, p := st.Tracks()
		e := Entry{Git: st.Remote(), Ref: ref, Path: p}
		return "git\x00" + remoteKey(st.Remote()), func(o Source) bool { return e.names(o, true) }, st.Remote() != ""
	case Directory:
		e := Entry{Dir: st.Directory()}
		return "dir\x00" + st.Directory(), func(o Source) bool { return e.names(o, true) }, st.Directory() != ""
	case Place:
		// The key holds the kind: two kinds may spell a place alike.
		key, _ := st.Place()
		return "place\x00" + string(s.Kind) + "\x00" + key, func(Source) bool { return true }, key != ""
	}
	return "", nil, false
}

// overlaps reports whether two sources of one location may take a skill
// both: their plugins: share a group (or one reads the whole source), and
// some name one of their skills: writes is kept by both selections, as a
// sync selects (repository.Options.Selects), excludes included. Two that
// take every skill overlap. Two globs are compared as written: pdf-* and
// *-tools are taken to select apart, so a warning is never about two
// entries that could not overlap.
func overlaps(a, b Source) bool {
	if len(a.Plugins) > 0 && len(b.Plugins) > 0 && !slices.ContainsFunc(a.Plugins, func(p string) bool {
		return slices.ContainsFunc(b.Plugins, func(q string) bool { return strings.EqualFold(p, q) })
	}) {
		return false
	}
	if len(a.Skills) == 0 && len(b.Skills) == 0 {
		return true
	}
	sa := repository.Options{Include: a.Skills, Exclude: a.Exclude}
	sb := repository.Options{Include: b.Skills, Exclude: b.Exclude}
	for _, name := range slices.Concat(a.Skills, b.Skills) {
		if s := (skill.Skill{Name: name}); sa.Selects(s) && sb.Selects(s) {
			return true
		}
	}
	return false
}

// duplicateWarning says that the source later reads what earlier reads,
// and what to do; entries are their indexes in repositories:.
func duplicateWarning(later, earlier Source, laterEntry, earlierEntry int) string {
	var what, fix string
	switch st := later.Settings.(type) {
	case Remote:
		what, fix = "repository "+repository.RedactURL(st.Remote())+" at the same ref and path", "another ref:, path: or skills: that do not overlap"
	case Directory:
		what, fix = "folder "+st.Directory(), "skills: that do not overlap"
	case Place:
		_, what = st.Place()
		fix = "skills: that do not overlap"
	}
	return fmt.Sprintf("line %d: repositories[%d] (%s) reads the same %s as repositories[%d] (%s, line %d), and selects skills it selects too: a sync copies them twice, under both source names; remove one of the two entries, or give them %s",
		later.Line, laterEntry, later.Name, what, earlierEntry, earlier.Name, earlier.Line, fix)
}
