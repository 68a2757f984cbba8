// Package hostid is the one check of a fleet host's id and environment,
// shared by the config (which checks fleet.host when it loads) and the
// fleet (which checks every heartbeat it writes and reads), so that the
// config needs no part of the fleet to say what a good id is.
package hostid

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen bounds a host id in bytes.
const MaxLen = 200

// Valid reports whether id can name a host: 1 to MaxLen bytes of valid
// UTF-8, no control or invisible formatting character, no space at its
// ends.
func Valid(id string) bool {
	return id != "" && len(id) <= MaxLen && strings.TrimSpace(id) == id && Printable(id)
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
