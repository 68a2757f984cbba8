// Package termtext makes text that comes from a source safe to print on a
// terminal.
//
// Anything a source holds (a skill's name, description, path, a file) is
// untrusted: an ESC starts a terminal control sequence that can clear the
// screen, retitle the window or hide the rest of the line; a carriage
// return or a newline can fake rows of output; and the Unicode
// bidirectional controls make text read differently from what it is
// ("Trojan Source"). The functions here show every such character as a
// visible escape instead, so what is printed is what is there.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r, printed raw, would act on a terminal or change
// how the text around it reads instead of being shown as one character:
//
//   - the C0 controls U+0000-U+001F (ESC, BEL, backspace, CR, LF, TAB, ...),
//     DEL U+007F and the C1 controls U+0080-U+009F (CSI U+009B among them);
//   - every Unicode format character (category Cf): the bidirectional
//     embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069,
//     the marks U+200E, U+200F and U+061C, the zero-width characters
//     U+200B-U+200D and U+2060, the soft hyphen U+00AD, the byte order mark
//     U+FEFF and the tag characters U+E0000-U+E007F;
//   - the line and paragraph separators U+2028 and U+2029, which some
//     terminals and editors break lines at.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r < 0xa0:
		return false
	case r == '\u2028', r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Escape returns s with every character that Unsafe reports, and every
// byte that is not valid UTF-8, replaced by a visible escape: "\n", "\r"
// and "\t" for those three, "\x1b" for the other ASCII controls and for
// invalid bytes, "\u202e" for other characters up to U+FFFF and
// "\U000e0001" above. The result is one line. Everything else, backslashes
// included, is kept as it is: the result is for people to read, not to
// parse back. A string with nothing to escape is returned unchanged,
// without allocating.
func Escape(s string) string {
	return escape(s, false)
}

// EscapeLines is Escape for text shown as a block of lines, such as a
// description or a file: it keeps line feeds, tabs and CRLF line ends as
// they are, and escapes everything else Escape does (a lone carriage
// return, which would let a line overwrite the one before it, among them).
func EscapeLines(s string) string {
	return escape(s, true)
}

func escape(s string, lines bool) string {
	i := firstUnsafe(s, lines)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\x`...)
			b = appendHex(b, uint32(s[i]), 2)
		case !Unsafe(r) || lines && kept(s, i, r):
			b = append(b, s[i:i+size]...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r < 0x80:
			b = append(b, `\x`...)
			b = appendHex(b, uint32(r), 2)
		case r <= 0xffff:
			b = append(b, `\u`...)
			b = appendHex(b, uint32(r), 4)
		default:
			b = append(b, `\U`...)
			b = appendHex(b, uint32(r), 8)
		}
		i += size
	}
	return string(b)
}

// kept reports whether EscapeLines keeps the character r at s[i]: a line
// feed, a tab, or a carriage return that ends a line.
func kept(s string, i int, r rune) bool {
	return r == '\n' || r == '\t' || r == '\r' && i+1 < len(s) && s[i+1] == '\n'
}

// firstUnsafe returns the index of the first byte that needs escaping, or
// -1. Printable ASCII, the common case, costs one comparison a byte.
func firstUnsafe(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Unsafe(r) && !(lines && kept(s, i, r)) {
			return i
		}
		i += size
	}
	return -1
}

func appendHex(b []byte, v uint32, digits int) []byte {
	h := strconv.FormatUint(uint64(v), 16)
	for n := len(h); n < digits; n++ {
		b = append(b, '0')
	}
	return append(b, h...)
}

// EscapeJSON returns JSON text with every character that Unsafe reports
// at or above U+007F written as a \uXXXX escape (a surrogate pair above
// U+FFFF). encoding/json already escapes the C0 controls, U+2028 and
// U+2029, but writes DEL, the C1 controls and the bidirectional and other
// format characters raw; after EscapeJSON the text is safe to print on a
// terminal and decodes to exactly the same values. b must be JSON as
// encoding/json writes it: outside strings it holds only ASCII, so the
// characters replaced are always inside a string. b is returned as it is
// when there is nothing to escape.
func EscapeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || !Unsafe(r) {
			i += size
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b)+16)
		}
		out = append(out, b[last:i]...)
		if r > 0xffff {
			r -= 0x10000
			out = appendU(out, 0xd800+uint32(r>>10))
			out = appendU(out, 0xdc00+uint32(r&0x3ff))
		} else {
			out = appendU(out, uint32(r))
		}
		i += size
		last = i
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func appendU(b []byte, v uint32) []byte {
	return appendHex(append(b, `\u`...), v, 4)
}

// ShellArg writes s as one word of a POSIX shell command line, for the
// commands a message tells the user to run: a path with a space or a
// quote in it, printed bare, would be split or cut by the shell that runs
// the copied line. s comes back as it is when it holds nothing a shell
// reads specially, else in single quotes. A ~ is left bare: at the start
// the shell makes it the home folder, as skillsync would.
func ShellArg(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("@%+=:,./_~-", r):
		default:
			plain = false
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
