package layering

import (
	"slices"
	"sort"

	"github.com/skillsync/skillsync/skill"
)

// Dedupe keeps one skill per case-insensitive name (Key), the first by
// path, as the catalog does: two cache directories differing only by case
// would collide on some file systems. It returns the ones it dropped too.
func Dedupe(skills []skill.Skill) (kept, dropped []skill.Skill) {
	sorted := slices.Clone(skills)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	seen := map[string]bool{}
	for _, s := range sorted {
		if k := Key(s.Name); !seen[k] {
			seen[k] = true
			kept = append(kept, s)
		} else {
			dropped = append(dropped, s)
		}
	}
	return kept, dropped
}
