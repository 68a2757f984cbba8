package editdistance

import "testing"

func TestLevenshtein(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"pdf", "", 3},
		{"", "pdf", 3},
		{"pdf", "pdf", 0},
		{"pdf", "pfd", 2},
		{"skillsync", "skilsync", 1},
		{"kitten", "sitting", 3},
		{"café", "cafe", 1}, // one rune, two bytes
		{"résumé", "resume", 2},
	} {
		if got := Levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Levenshtein(tt.b, tt.a); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}
