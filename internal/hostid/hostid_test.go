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

// TestSkeletonLookalikes: each Cyrillic and Greek letter drawn like a
// Latin letter or a digit in a host name, in lower and upper case (the
// canonical form lowers it first), has the skeleton of the Latin id it
// poses as; ids that only differ in a letter of their own script do not.
func TestSkeletonLookalikes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spoof, latin string
	}{
		// Cyrillic, lower case.
		{"\u0430pi", "api"},       // а
		{"\u0432ox", "box"},       // в (small capital B)
		{"\u044cox", "box"},       // ь
		{"\u0441i-1", "ci-1"},     // с
		{"\u0501b", "db"},         // ԁ
		{"w\u0435b", "web"},       // е
		{"\u04bbost", "host"},     // һ
		{"\u043dost", "host"},     // н (small capital H)
		{"\u0456o", "io"},         // і
		{"\u0458ob", "job"},       // ј
		{"\u043aube", "kube"},     // к
		{"\u04cfb", "lb"},         // ӏ
		{"\u043cail", "mail"},     // м
		{"\u043fas", "nas"},       // п
		{"n\u043ede", "node"},     // о
		{"\u0440g", "pg"},         // р
		{"\u051ba", "qa"},         // ԛ
		{"\u0433unner", "runner"}, // г
		{"\u0455ql", "sql"},       // ѕ
		{"\u0442est", "test"},     // т
		{"\u0475m", "vm"},         // ѵ
		{"\u051deb", "web"},       // ԝ
		{"\u0445en", "xen"},       // х
		{"\u0443um", "yum"},       // у
		{"\u04afum", "yum"},       // ү
		{"web-\u0437", "web-3"},   // з, a digit
		{"web-\u04e1", "web-3"},   // ӡ
		{"node-\u0431", "node-6"}, // б
		{"\u0451lk", "\u00eblk"},  // ё is е with a diaeresis: ë
		// Cyrillic, upper case.
		{"\u0410PI", "api"},     // А
		{"\u0412OX", "box"},     // В
		{"\u0421I-1", "ci-1"},   // С
		{"W\u0415B", "web"},     // Е
		{"\u041dOST", "host"},   // Н
		{"\u0406O", "io"},       // І
		{"\u0408OB", "job"},     // Ј
		{"\u041aUBE", "kube"},   // К
		{"\u04c0B", "lb"},       // Ӏ
		{"\u041cAIL", "mail"},   // М
		{"N\u041eDE", "node"},   // О
		{"\u0420G", "pg"},       // Р
		{"\u0405QL", "sql"},     // Ѕ
		{"\u0422EST", "test"},   // Т
		{"\u0425EN", "xen"},     // Х
		{"\u04aeUM", "yum"},     // Ү
		{"WEB-\u0417", "web-3"}, // З
		{"\u051aA", "qa"},       // Ԛ
		{"\u051cEB", "web"},     // Ԝ
		// Greek, lower case.
		{"\u03b1pi", "api"},   // α
		{"\u03b2ox", "box"},   // β
		{"\u03f2i-1", "ci-1"}, // ϲ, lunate sigma
		{"w\u03b5b", "web"},   // ε
		{"\u03b9o", "io"},     // ι
		{"\u03f3ob", "job"},   // ϳ
		{"\u03baube", "kube"}, // κ
		{"\u03b7as", "nas"},   // η
		{"n\u03bfde", "node"}, // ο
		{"\u03c1g", "pg"},     // ρ
		{"\u03c4est", "test"}, // τ
		{"\u03c5p", "up"},     // υ
		{"\u03bdm", "vm"},     // ν
		{"\u03c9eb", "web"},   // ω
		{"\u03c7en", "xen"},   // χ
		{"\u03b3um", "yum"},   // γ
		// Greek, upper case: folded to the lower case first.
		{"\u0391PI", "api"},   // Α
		{"\u0392OX", "box"},   // Β
		{"\u03f9I-1", "ci-1"}, // Ϲ
		{"W\u0395B", "web"},   // Ε
		{"\u0399O", "io"},     // Ι
		{"\u037fOB", "job"},   // Ϳ
		{"\u039aUBE", "kube"}, // Κ
		{"N\u039fDE", "node"}, // Ο
		{"\u03a1G", "pg"},     // Ρ
		{"\u03a4EST", "test"}, // Τ
		{"\u03a7EN", "xen"},   // Χ
	} {
		if Canonical(c.spoof) == Canonical(c.latin) {
			t.Errorf("Canonical merges %q and %q: a lookalike is another host", c.spoof, c.latin)
		}
		if a, b := Skeleton(c.spoof), Skeleton(c.latin); a != b {
			t.Errorf("Skeleton(%q) = %q (%+q), Skeleton(%q) = %q: want one skeleton", c.spoof, a, a, c.latin, b)
		}
	}
	for _, c := range []struct{ a, b string }{
		{"host", "nost"},
		{"ci-1", "oi-1"},
		{"web-3", "web-8"},
		{"node-6", "node-b"},
		{"\u0441i", "\u043ei"}, // с and о
	} {
		if Skeleton(c.a) == Skeleton(c.b) {
			t.Errorf("Skeleton(%q) = Skeleton(%q) = %q: not lookalikes", c.a, c.b, Skeleton(c.a))
		}
	}
}
