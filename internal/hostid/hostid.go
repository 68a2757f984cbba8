// Package hostid is the one check of a fleet host's id and environment,
// shared by the config (which checks fleet.host when it loads) and the
// fleet (which checks every heartbeat it writes and reads), so that the
// config needs no part of the fleet to say what a good id is.
package hostid

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxLen bounds a host id in bytes.
const MaxLen = 200

// Valid reports whether id can name a host: 1 to MaxLen bytes of valid
// UTF-8, no control or invisible formatting character, no space at its
// ends, and its canonical form, the id the fleet store keys it by, no
// longer than MaxLen either: folding can lengthen an id (Ⱥ, 2 bytes, is
// ⱥ, 3; a composition exclusion such as U+0958 is 6 bytes in NFC), and
// an id valid as written but not as the store keys it would have every
// push refused.
func Valid(id string) bool {
	return id != "" && len(id) <= MaxLen && strings.TrimSpace(id) == id && Printable(id) && len(Canonical(id)) <= MaxLen
}

// Printable reports whether s is valid UTF-8 without control or format
// characters.
func Printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// Canonical is the form of id the fleet store keys a host by: two ids
// that differ only in case or in Unicode normalization (macOS spells a
// host name decomposed, NFD; Linux composed, NFC) are one host. It folds
// as skill.FoldName does (NFD, then each character to one member of its
// simple case-fold orbit), picking the lower-case member where the orbit
// has one, and composes the result again (NFC), so that "Build-01" and
// "build-01" are "build-01", and "café" in NFC and in NFD one "café".
// Canonical(Canonical(id)) == Canonical(id).
func Canonical(id string) string {
	folded := strings.Map(foldRune, norm.NFD.String(id))
	return norm.NFC.String(folded)
}

// foldRune is the member of r's simple case-fold orbit Canonical keeps:
// the lower case of the upper case of the orbit's least member when that
// is in the orbit (k for K, k and the Kelvin sign; σ for Σ, σ and ς; ι
// for the orbit of Ι, whose least member is a combining mark), else the
// least member (İ, whose lower case i is another orbit's, stays İ).
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	low := unicode.ToLower(unicode.ToUpper(least))
	if low == least {
		return least
	}
	for f := unicode.SimpleFold(least); f != least; f = unicode.SimpleFold(f) {
		if f == low {
			return low
		}
	}
	return least
}

// Skeleton is what id looks like, for telling apart ids that are not the
// same host (not Canonical's variants) but read as one: its canonical
// form, with compatibility characters decomposed (fullwidth letters,
// ligatures) and the Cyrillic and Greek letters drawn like Latin letters
// or digits taken for those. Two ids of one skeleton and two canonical
// forms are lookalikes: "build-01" with a Cyrillic а is not merged with
// the Latin one, but fleet status warns of the pair. It is a heuristic over the
// letters host names are spoofed with, not Unicode's full table of
// confusables.
func Skeleton(id string) string {
	return norm.NFC.String(strings.Map(func(r rune) rune {
		l, _ := lookalike(r)
		return l
	}, norm.NFKD.String(Canonical(id))))
}

// lookalike is the Latin letter or digit the lower-case Cyrillic or
// Greek letter r is drawn like (after Canonical, which lower-cases, and
// NFKD, which takes the diaeresis off ё and ї and makes the lunate sigma
// ϲ a ς), and whether it is one. TestSkeletonLookalikes lists each with
// the host name it would pose as.
func lookalike(r rune) (rune, bool) {
	switch r {
	case 'а', 'α': // Cyrillic a, Greek alpha
		return 'a', true
	case 'в', 'ь', 'β':
		return 'b', true
	case 'с', 'ς': // Cyrillic es; ς only from a lunate sigma (Canonical folds a final sigma to σ)
		return 'c', true
	case 'ԁ':
		return 'd', true
	case 'е', 'ε':
		return 'e', true
	case 'һ', 'н':
		return 'h', true
	case 'і', 'ι':
		return 'i', true
	case 'ј', 'ϳ': // Cyrillic je, Greek yot
		return 'j', true
	case 'к', 'κ':
		return 'k', true
	case 'ӏ':
		return 'l', true
	case 'м':
		return 'm', true
	case 'п', 'η':
		return 'n', true
	case 'о', 'ο':
		return 'o', true
	case 'р', 'ρ':
		return 'p', true
	case 'ԛ':
		return 'q', true
	case 'г':
		return 'r', true
	case 'ѕ':
		return 's', true
	case 'т', 'τ':
		return 't', true
	case 'υ':
		return 'u', true
	case 'ν', 'ѵ': // Greek nu, Cyrillic izhitsa
		return 'v', true
	case 'ԝ', 'ω':
		return 'w', true
	case 'х', 'χ':
		return 'x', true
	case 'у', 'ү', 'γ':
		return 'y', true
	case 'з', 'ӡ': // Cyrillic ze, Abkhazian dze
		return '3', true
	case 'б':
		return '6', true
	}
	return r, false
}
