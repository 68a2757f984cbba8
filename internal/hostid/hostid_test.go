package hostid

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"laptop-1", true},
		{"büro", true},
		{"", false},
		{" lead", false},
		{"trail ", false},
		{"bell\a", false},
		{"zero\u200bwidth", false},
		{"bad\xffutf8", false},
		{strings.Repeat("h", MaxLen), true},
		{strings.Repeat("h", MaxLen+1), false},
	} {
		if got := Valid(c.id); got != c.want {
			t.Errorf("Valid(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}
