package curator

import "github.com/skillsync/skillsync/layering"

// CountStates counts the cached skills of the marketplace source by their
// curation state in u, and its archived ones: active, stale and archived
// are always there. A nil u counts every cached skill active.
func CountStates(u *Usage, source string, cached []string) map[string]int {
	out := map[string]int{string(Active): 0, string(Stale): 0, string(Archived): 0}
	for _, name := range cached {
		state := Active
		if u != nil {
			state = u.StateOf(Copy{Layer: layering.Marketplace, Owner: source, Name: name})
		}
		out[string(state)]++
	}
	if u != nil {
		out[string(Archived)] += len(u.ArchivedIn(layering.Marketplace, source))
	}
	return out
}
