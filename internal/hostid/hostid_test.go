package hostid

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
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
		{strings.Repeat("H", MaxLen), true},
		// Within MaxLen as written, past it as the store keys it.
		{strings.Repeat("\u023a", MaxLen/2), false},
		{strings.Repeat("\u0958", MaxLen/3), false},
		{strings.Repeat("\u023a", MaxLen/3), true},
	} {
		if got := Valid(c.id); got != c.want {
			t.Errorf("Valid(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}

// TestCanonical: ids that differ only in case or normalization are one
// host; a lookalike from another script is not.
func TestCanonical(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ a, b string }{
		{"Build-01", "build-01"},
		{"BUILD-01", "build-01"},
		{"caf\u00e9", "cafe\u0301"},                    // NFC and NFD
		{"CAFE\u0301", "caf\u00e9"},                    // case and NFD at once
		{"\u212aiosk", "kiosk"},                        // the Kelvin sign is a K
		{"ΣΟΦΙΑ", "σοφια"},                             // Greek capitals
		{"Stra\u00dfe", "STRA\u1e9eE"},                 // ß and capital ẞ
		{"\u00c5ngstr\u00f6m", "a\u030angstro\u0308m"}, // composed and decomposed
	} {
		ca, cb := Canonical(c.a), Canonical(c.b)
		if ca != cb {
			t.Errorf("Canonical(%q) = %q, Canonical(%q) = %q: want one host", c.a, ca, c.b, cb)
		}
		if Canonical(ca) != ca {
			t.Errorf("Canonical(%q) = %q is not a fixed point", ca, Canonical(ca))
		}
		if !norm.NFC.IsNormalString(ca) {
			t.Errorf("Canonical(%q) = %q is not NFC", c.a, ca)
		}
	}
	for in, want := range map[string]string{"Build-01": "build-01", "\u03a3\u039f\u03a6\u0399\u0391": "\u03c3\u03bf\u03c6\u03b9\u03b1", "\u00b5": "\u03bc", "STRA\u1e9eE": "stra\u00dfe"} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want the lower case, %q", in, got, want)
		}
	}
	for _, c := range []struct{ a, b string }{
		{"build-01", "build-02"},
		{"b\u0430ckup", "backup"}, // Cyrillic а
		{"\u0130stanbul", "istanbul"},
		{"cafe", "caf\u00e9"},
	} {
		if Canonical(c.a) == Canonical(c.b) {
			t.Errorf("Canonical merges %q and %q", c.a, c.b)
		}
	}
}

// TestSkeleton: a Cyrillic or Greek letter drawn like a Latin one makes
// a lookalike; case and normalization variants have one skeleton anyway.
func TestSkeleton(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"b\u0430ckup", "backup", true},     // Cyrillic а
		{"\u0412UILD-01", "build-01", true}, // Cyrillic В, upper case
		{"n\u03bfde-7", "node-7", true},     // Greek ο
		{"\uff42uild", "build", true},       // fullwidth b
		{"Build-01", "build-01", true},
		{"build-01", "build-02", false},
		{"backup", "hackup", false},
	} {
		if got := Skeleton(c.a) == Skeleton(c.b); got != c.same {
			t.Errorf("Skeleton(%q) = %q, Skeleton(%q) = %q: same %v, want %v", c.a, Skeleton(c.a), c.b, Skeleton(c.b), got, c.same)
		}
	}
}
