// Package jsonscan reads JSON documents of one known shape front to
// back, without reflection, for the record files every command reads
// whole (the usage file, skillsync.lock): with thousands of skills,
// encoding/json was the larger part of a sync with nothing new.
//
// A Scanner only reads what it is asked for and reports false for
// anything it is not sure of (an escape in a member name, a fraction, a
// value of another type, invalid JSON). Its callers then decode the
// document with encoding/json, so errors and edge cases keep their
// behaviour and messages. Strings are validated as encoding/json
// validates them, and unquoted by encoding/json itself when they hold an
// escape or bytes that are not UTF-8.
package jsonscan

import (
	"encoding/json"
	"unicode/utf8"
)

// Scanner is a position in a document. The zero value is not usable: use
// New.
type Scanner struct {
	data []byte
	pos  int
	// last is where the string Str read last begins, at its quote.
	last int
}

// New returns a scanner at the start of data.
func New(data []byte) Scanner { return Scanner{data: data} }

// Failed reports whether a loop over an object's members (First, Next)
// ended on a syntax error rather than on the closing brace.
func (s *Scanner) Failed() bool { return s.pos < 0 }

// End skips whitespace and reports whether the document ends there.
func (s *Scanner) End() bool {
	s.Space()
	return s.pos == len(s.data)
}

// Fields reads an object whose members field reads: it is given each
// member's name (raw, without quotes; see Key) after its colon, reads the
// value, and reports false to give up, as on a name it does not know.
func (s *Scanner) Fields(field func(key []byte) bool) bool {
	if !s.Begin() {
		return false
	}
	for more := s.First(); more; more = s.Next() {
		key, ok := s.Key()
		if !ok || !field(key) {
			return false
		}
	}
	return !s.Failed()
}

// The object walk: Begin reads '{', First reports whether a member
// follows it, Next reads ',' (true) or '}' (false). On a syntax error
// Next reports false and Failed true, which every loop checks after it
// ends.

// Begin reads the '{' that opens an object.
func (s *Scanner) Begin() bool {
	s.Space()
	if s.pos < len(s.data) && s.data[s.pos] == '{' {
		s.pos++
		return true
	}
	return false
}

// First reports whether the object just begun has a member, and reads
// its '}' if not.
func (s *Scanner) First() bool {
	s.Space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return false
	}
	return true
}

// Next reads the ',' before another member (true) or the '}' that ends
// the object (false).
func (s *Scanner) Next() bool {
	s.Space()
	if s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ',':
			s.pos++
			return true
		case '}':
			s.pos++
			return false
		}
	}
	s.pos = -1
	return false
}

// Space skips JSON whitespace.
func (s *Scanner) Space() {
	data, i := s.data, s.pos
	for i < len(data) && data[i] <= ' ' && spaces&(uint64(1)<<data[i]) != 0 {
		i++
	}
	s.pos = i
}

// spaces has the bits of the four whitespace bytes JSON has.
const spaces uint64 = 1<<' ' | 1<<'\n' | 1<<'\t' | 1<<'\r'

// Colon reads the ':' after a member's name.
func (s *Scanner) Colon() bool {
	s.Space()
	if s.pos < len(s.data) && s.data[s.pos] == ':' {
		s.pos++
		return true
	}
	return false
}

// Key reads a member name and its colon and returns the name's raw
// bytes, quotes stripped. Callers compare them with field names exactly,
// so a name with an escape (which could unescape to a field's name) or
// in another case (which encoding/json would match) matches none and
// makes them give up.
func (s *Scanner) Key() ([]byte, bool) {
	raw, ok := s.Str()
	if !ok || !s.Colon() {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// Str reads a string, validating it as JSON does (no control character,
// only the escapes JSON has), and returns it raw, quotes included.
func (s *Scanner) Str() ([]byte, bool) {
	s.Space()
	data := s.data
	start := s.pos
	if start >= len(data) || data[start] != '"' {
		return nil, false
	}
	for i := start + 1; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			s.pos, s.last = i+1, start
			return data[start:s.pos], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			i++
			if i >= len(data) {
				return nil, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return nil, false
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return nil, false
					}
				}
				i += 4
			default:
				return nil, false
			}
		}
	}
	return nil, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Text returns what encoding/json unquotes the raw string (as Str
// returns it) to: its bytes when it has no escape and is valid UTF-8,
// else encoding/json's own reading of it (which replaces invalid UTF-8 as
// it always does).
func Text(raw []byte) ([]byte, bool) {
	inner := raw[1 : len(raw)-1]
	ascii := true
	for _, c := range inner {
		if c == '\\' {
			return unquote(raw)
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if ascii || utf8.Valid(inner) {
		return inner, true
	}
	return unquote(raw)
}

// unquote reads a raw JSON string with encoding/json.
func unquote(raw []byte) ([]byte, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// HasEscape reports whether a raw string holds a backslash.
func HasEscape(raw []byte) bool {
	for _, x := range raw {
		if x == '\\' {
			return true
		}
	}
	return false
}

// Null reads a null if one is next.
func (s *Scanner) Null() bool {
	return s.Literal("null")
}

// Literal reads word if it is next, as a whole token.
func (s *Scanner) Literal(word string) bool {
	s.Space()
	end := s.pos + len(word)
	if end > len(s.data) || string(s.data[s.pos:end]) != word {
		return false
	}
	if end < len(s.data) && !delimiter(s.data[end]) {
		return false
	}
	s.pos = end
	return true
}

// delimiter reports whether c may follow a number or a literal inside an
// object.
func delimiter(c byte) bool {
	switch c {
	case ' ', '\n', '\t', '\r', ',', '}':
		return true
	}
	return false
}

// maxDigits is the longest number Int reads without a doubt about
// overflow; a longer one is given up on.
const maxDigits = 18

// Int reads an integer into p, or leaves p as it is for null, as
// encoding/json does for an int field.
func (s *Scanner) Int(p *int) bool {
	if s.Null() { // which skipped the whitespace before the value
		return true
	}
	data := s.data
	i := s.pos
	neg := false
	if i < len(data) && data[i] == '-' {
		neg = true
		i++
	}
	start := i
	var n int64
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		n = n*10 + int64(data[i]-'0')
		i++
	}
	digits := i - start
	switch {
	case digits == 0 || digits > maxDigits:
		return false
	case digits > 1 && data[start] == '0':
		return false // a leading zero is not JSON
	case i < len(data) && !delimiter(data[i]):
		return false // a fraction, an exponent, or not a number
	}
	if neg {
		n = -n
	}
	if int64(int(n)) != n {
		return false
	}
	*p = int(n)
	s.pos = i
	return true
}

// Bool reads true or false into p; null leaves p as it is.
func (s *Scanner) Bool(p *bool) bool {
	switch {
	case s.Literal("true"):
		*p = true
	case s.Literal("false"):
		*p = false
	case s.Null():
	default:
		return false
	}
	return true
}

// String reads a string into p; null leaves p as it is.
func (s *Scanner) String(p *string) bool {
	if s.Null() {
		return true
	}
	raw, ok := s.Str()
	if !ok {
		return false
	}
	text, ok := Text(raw)
	if !ok {
		return false
	}
	*p = string(text)
	return true
}

// StringIn reads a string into p as String does, but one without an
// escape, in valid UTF-8, becomes a slice of doc, which must hold the
// same bytes as the scanner's data: a document of thousands of names and
// hashes is then one string, not thousands. null leaves p as it is.
func (s *Scanner) StringIn(doc string, p *string) bool {
	if s.Null() {
		return true
	}
	raw, ok := s.Str()
	if !ok {
		return false
	}
	*p, ok = s.textIn(doc, raw)
	return ok
}

// KeyIn reads a member name and its colon, unquoted, as StringIn reads a
// string.
func (s *Scanner) KeyIn(doc string) (string, bool) {
	raw, ok := s.Str()
	if !ok || !s.Colon() {
		return "", false
	}
	return s.textIn(doc, raw)
}

// textIn unquotes raw, the string Str read last, as a slice of doc
// where it can.
func (s *Scanner) textIn(doc string, raw []byte) (string, bool) {
	inner := raw[1 : len(raw)-1]
	if !HasEscape(inner) && utf8.Valid(inner) {
		start := s.last + 1
		return doc[start : start+len(inner)], true
	}
	text, ok := Text(raw)
	return string(text), ok
}
