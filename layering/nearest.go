package layering

import (
	"sort"
	"strings"

	"github.com/skillsync/skillsync/internal/editdistance"
)

// Nearest returns up to n names of winners that look like name: those
// containing it, or within a small edit distance, closest first. A name
// longer than maxNearest bytes gets none: no skill's name is that long,
// and the distance to each would cost its length times theirs (a 1 MB
// name sent to the MCP server held a core for 25 s).
func Nearest(winners []*Winner, name string, n int) []string {
	names := make([]string, len(winners))
	for i, w := range winners {
		names[i] = w.Skill.Name
	}
	return NearestNames(names, name, n)
}

// NearestNames is Nearest among names.
func NearestNames(names []string, name string, n int) []string {
	if len(name) > maxNearest {
		return nil
	}
	key := Key(name)
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, have := range names {
		k := Key(have)
		d := editdistance.Levenshtein(key, k)
		if strings.Contains(k, key) || strings.Contains(key, k) {
			d = min(d, 1)
		}
		if d <= max(2, len(key)/3) {
			cands = append(cands, cand{have, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

// maxNearest bounds the names Nearest looks for.
const maxNearest = 256
