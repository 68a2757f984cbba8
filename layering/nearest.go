package layering

import "github.com/skillsync/skillsync/internal/editdistance"

// Nearest returns up to n names of winners that look like name: those
// containing it, or within a small edit distance, closest first
// (editdistance.Nearest, which gives a name too long for any skill none).
func Nearest(winners []*Winner, name string, n int) []string {
	names := make([]string, len(winners))
	for i, w := range winners {
		names[i] = w.Skill.Name
	}
	return NearestNames(names, name, n)
}

// NearestNames is Nearest among names, compared as the catalog compares
// names (Key).
func NearestNames(names []string, name string, n int) []string {
	return editdistance.Nearest(names, name, n, Key)
}
