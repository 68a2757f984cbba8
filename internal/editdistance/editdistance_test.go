package editdistance

import (
	"slices"
	"strings"
	"testing"
)

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

func TestNearest(t *testing.T) {
	t.Parallel()
	names := []string{"builtin", "team", "pdf", "pdf-tools", "docx"}
	for _, tt := range []struct {
		name string
		n    int
		want []string
	}{
		{"biultin", 1, []string{"builtin"}},
		{"BUILTIN", 3, []string{"builtin"}},      // folded
		{"pdf", 2, []string{"pdf", "pdf-tools"}}, // contained in a name
		{"docs", 3, []string{"docx"}},
		{"spreadsheet", 3, nil},
		{strings.Repeat("p", 300), 3, nil}, // too long to compare
	} {
		if got := Nearest(names, tt.name, tt.n, strings.ToLower); !slices.Equal(got, tt.want) {
			t.Errorf("Nearest(%.20q, %d) = %q, want %q", tt.name, tt.n, got, tt.want)
		}
	}
}
