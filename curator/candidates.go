package curator

import "github.com/skillsync/skillsync/layering"

// CandidatesOf are a catalog's winners as a curation judges them: each
// copy copyOf can name, a local one with its folder and its layer's
// folder in dirs (the layers whose skills archiving moves into their
// .archive/), a marketplace one without.
func CandidatesOf(winners []*layering.Winner, copyOf func(*layering.Entry) (Copy, bool), dirs []LayerDir) []Candidate {
	layerDir := map[layering.Layer]string{}
	for _, l := range dirs {
		layerDir[l.Layer] = l.Dir
	}
	var out []Candidate
	for _, w := range winners {
		c, ok := copyOf(&w.Entry)
		if !ok {
			continue
		}
		cand := Candidate{Copy: c}
		if w.Layer != layering.Marketplace {
			cand.Dir, cand.LayerDir = w.Dir, layerDir[w.Layer]
		}
		out = append(out, cand)
	}
	return out
}
