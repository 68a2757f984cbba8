package layering

import (
	"strings"
	"testing"
)

// Shorten cuts to n characters, the last one "…", and turns bytes that
// are no UTF-8 into U+FFFD only when it cuts, as a conversion to runes
// does.
func TestShorten(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 5, ""},
		{"short", 5, "short"},
		{"longer", 5, "long…"},
		{"héllo wörld", 6, "héllo…"},
		{"日本語のスキル", 4, "日本語…"},
		{"ab\xffcdef", 5, "ab\uFFFDc…"},
		{"ab\xff", 5, "ab\xff"},
		{"abcdef\xff", 4, "abc…"},
		{"abcdef", 1, "…"},
		{strings.Repeat("x", 61), 60, strings.Repeat("x", 59) + "…"},
	} {
		if got := Shorten(tc.s, tc.n); got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
