package curator

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// This file reads a version-2 .usage.json without reflection. Every
// command that reads usage (sync, use, prompt, list, the daemon, the
// curator) decodes the whole file, and with encoding/json that was an
// eighth of the CPU of a no-op sync on a 2,000-skill workspace.
//
// fastDecode accepts only the shape Store writes (indented or not, fields
// in any order, any of them repeated or null) and, for every input it
// accepts, builds exactly what json.Unmarshal builds into the same
// starting Usage: keys go through Copy.UnmarshalText, states and sources
// through their UnmarshalText, times through time.Time.UnmarshalJSON on
// the raw bytes, strings with escapes or non-UTF-8 bytes through
// encoding/json itself. Anything else (an unknown or case-variant key, an
// escape in a key that names a field, a fraction, an exponent or a number
// too long to be sure of, a value of another type, invalid JSON, trailing
// data, a version other than 2, a key or value its decoder refuses) makes
// it give up, and decode falls back to encoding/json, so errors and edge
// cases keep their behaviour and messages. It reads the document once,
// front to back, nesting no deeper than the schema (days inside a record
// inside skills), and never recurses.

// usageDecoder is the state of one fastDecode: the input, the position,
// caches that let equal values share one decoding, and the blocks records
// are cut from.
type usageDecoder struct {
	data []byte
	pos  int
	// states and sources map the raw bytes of a value to what its
	// UnmarshalText made of them; days interns the keys of days.
	states  map[string]State
	sources map[string]Source
	days    map[string]string
	// records and times are what is left of the current blocks.
	records []SkillUsage
	times   []time.Time
}

// slab is the size of the blocks records and times are cut from: a few
// allocations for a whole file instead of one or more per record.
const slab = 128

// fastDecode decodes a version-2 usage file as json.Unmarshal decodes it
// into newUsage() with Version 0, or reports false when it is not sure it
// would; the caller then uses json.Unmarshal.
func fastDecode(data []byte) (*Usage, bool) {
	d := usageDecoder{
		data:    data,
		states:  map[string]State{},
		sources: map[string]Source{},
		days:    map[string]string{},
	}
	u := newUsage()
	u.Version = 0
	if !d.usage(u) || u.Version != UsageVersion {
		return nil, false
	}
	return u, true
}

// usage reads the top-level object and checks nothing follows it.
func (d *usageDecoder) usage(u *Usage) bool {
	ok := d.fields(func(key []byte) bool {
		switch string(key) {
		case "version":
			return d.int(&u.Version)
		case "skills":
			if d.null() {
				u.Skills = nil
				return true
			}
			return d.skills(&u.Skills)
		case "curator":
			return d.null() || d.curator(&u.Curator)
		}
		return false
	})
	if !ok {
		return false
	}
	d.space()
	return d.pos == len(d.data)
}

// fields reads an object of known fields: field reads the value of each
// key, and gives up (false) on a key it does not know.
func (d *usageDecoder) fields(field func(key []byte) bool) bool {
	if !d.begin() {
		return false
	}
	for more := d.first(); more; more = d.next() {
		key, ok := d.key()
		if !ok || !field(key) {
			return false
		}
	}
	return d.pos >= 0
}

// skillEntry is one member of the skills object.
type skillEntry struct {
	c Copy
	r *SkillUsage
}

// skills reads the skills object into *p: each entry replaces the record
// of its key, a null one with a nil record (decode drops those). The
// entries are gathered first, in blocks that are never copied, and put in
// the map in their order, so the last of a key wins as with encoding/json,
// and an empty map is replaced by one made to their number rather than
// grown a dozen times.
func (d *usageDecoder) skills(p *map[Copy]*SkillUsage) bool {
	if !d.begin() {
		return false
	}
	var full [][]skillEntry // blocks of slab entries
	var entries []skillEntry
	for more := d.first(); more; more = d.next() {
		raw, ok := d.str()
		if !ok || !d.colon() {
			return false
		}
		var r *SkillUsage
		if !d.null() {
			r = d.newRecord()
			if !d.record(r) {
				return false
			}
		}
		text, ok := d.text(raw)
		if !ok {
			return false
		}
		var c Copy
		if c.UnmarshalText(text) != nil {
			return false
		}
		if len(entries) == slab {
			full = append(full, entries)
			entries = nil
		}
		if entries == nil {
			entries = make([]skillEntry, 0, slab)
		}
		entries = append(entries, skillEntry{c, r})
	}
	if d.pos < 0 {
		return false
	}
	if len(*p) == 0 {
		*p = make(map[Copy]*SkillUsage, len(full)*slab+len(entries))
	}
	m := *p
	for _, block := range append(full, entries) {
		for _, e := range block {
			m[e.c] = e.r
		}
	}
	return true
}

// newRecord returns a zero record cut from the current block.
func (d *usageDecoder) newRecord() *SkillUsage {
	if len(d.records) == 0 {
		d.records = make([]SkillUsage, slab)
	}
	r := &d.records[0]
	d.records = d.records[1:]
	return r
}

// newTime returns a zero time cut from the current block.
func (d *usageDecoder) newTime() *time.Time {
	if len(d.times) == 0 {
		d.times = make([]time.Time, slab)
	}
	t := &d.times[0]
	d.times = d.times[1:]
	return t
}

// record reads one record into su, which is zero.
func (d *usageDecoder) record(su *SkillUsage) bool {
	return d.fields(func(key []byte) bool {
		switch string(key) {
		case "use_count":
			return d.int(&su.UseCount)
		case "view_count":
			return d.int(&su.ViewCount)
		case "first_seen_at":
			return d.time(&su.FirstSeenAt)
		case "last_used_at":
			return d.time(&su.LastUsedAt)
		case "last_viewed_at":
			return d.time(&su.LastViewedAt)
		case "state_since":
			return d.time(&su.StateSince)
		case "last_source":
			return d.source(&su.LastSource)
		case "state":
			return d.state(&su.State)
		case "pinned":
			return d.bool(&su.Pinned)
		case "days":
			return d.dayMap(&su.Days)
		}
		return false
	})
}

// dayMap reads days: null clears the map; an object adds to it (made if
// nil), each entry starting from a zero count, a null one staying zero.
func (d *usageDecoder) dayMap(p *map[string]DayCount) bool {
	if d.null() {
		*p = nil
		return true
	}
	if !d.begin() {
		return false
	}
	if *p == nil {
		*p = map[string]DayCount{}
	}
	m := *p
	for more := d.first(); more; more = d.next() {
		raw, ok := d.str()
		if !ok || !d.colon() {
			return false
		}
		var c DayCount
		if !d.null() && !d.dayCount(&c) {
			return false
		}
		day, ok := d.intern(raw)
		if !ok {
			return false
		}
		m[day] = c
	}
	return d.pos >= 0
}

func (d *usageDecoder) dayCount(c *DayCount) bool {
	return d.fields(func(key []byte) bool {
		switch string(key) {
		case "uses":
			return d.int(&c.Uses)
		case "views":
			return d.int(&c.Views)
		}
		return false
	})
}

func (d *usageDecoder) curator(c *CuratorState) bool {
	return d.fields(func(key []byte) bool {
		switch string(key) {
		case "last_run_at":
			return d.time(&c.LastRunAt)
		case "last_summary":
			return d.string(&c.LastSummary)
		}
		return false
	})
}

// The object walk: begin reads '{', first reports whether a member
// follows it, next reads ',' (true) or '}' (false). On a syntax error
// next sets pos to -1 and reports false, which every loop checks after it
// ends.

func (d *usageDecoder) begin() bool {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '{' {
		d.pos++
		return true
	}
	return false
}

func (d *usageDecoder) first() bool {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return false
	}
	return true
}

func (d *usageDecoder) next() bool {
	d.space()
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ',':
			d.pos++
			return true
		case '}':
			d.pos++
			return false
		}
	}
	d.pos = -1
	return false
}

// space skips JSON whitespace.
func (d *usageDecoder) space() {
	data, i := d.data, d.pos
	for i < len(data) && data[i] <= ' ' && spaces&(uint64(1)<<data[i]) != 0 {
		i++
	}
	d.pos = i
}

// spaces has the bits of the four whitespace bytes JSON has.
const spaces uint64 = 1<<' ' | 1<<'\n' | 1<<'\t' | 1<<'\r'

func (d *usageDecoder) colon() bool {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ':' {
		d.pos++
		return true
	}
	return false
}

// key reads a member name and its colon and returns the name's raw
// bytes, quotes stripped. The callers compare them with field names
// exactly, so a name with an escape (which could unescape to a field's
// name) or in another case matches none and makes them give up.
func (d *usageDecoder) key() ([]byte, bool) {
	raw, ok := d.str()
	if !ok || !d.colon() {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// str reads a string, validating it as JSON does (no control character,
// only the escapes JSON has), and returns it raw, quotes included.
func (d *usageDecoder) str() ([]byte, bool) {
	d.space()
	data := d.data
	start := d.pos
	if start >= len(data) || data[start] != '"' {
		return nil, false
	}
	for i := start + 1; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			d.pos = i + 1
			return data[start:d.pos], true
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

// text returns what encoding/json unquotes the raw string to: its bytes
// when it has no escape and is valid UTF-8, else encoding/json's own
// reading of it (which replaces invalid UTF-8 as it always does).
func (d *usageDecoder) text(raw []byte) ([]byte, bool) {
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

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// intern returns the unquoted raw string, one string per distinct key.
func (d *usageDecoder) intern(raw []byte) (string, bool) {
	if s, ok := d.days[string(raw)]; ok {
		return s, true
	}
	text, ok := d.text(raw)
	if !ok {
		return "", false
	}
	s := string(text)
	d.days[string(raw)] = s
	return s, true
}

// null reads a null if one is next.
func (d *usageDecoder) null() bool {
	return d.literal("null")
}

// literal reads word if it is next, as a whole token.
func (d *usageDecoder) literal(word string) bool {
	d.space()
	end := d.pos + len(word)
	if end > len(d.data) || string(d.data[d.pos:end]) != word {
		return false
	}
	if end < len(d.data) && !delimiter(d.data[end]) {
		return false
	}
	d.pos = end
	return true
}

// delimiter reports whether c may follow a number or a literal in the
// objects this decoder reads.
func delimiter(c byte) bool {
	switch c {
	case ' ', '\n', '\t', '\r', ',', '}':
		return true
	}
	return false
}

// maxDigits is the longest number int reads here without a doubt about
// overflow; a longer one goes to encoding/json.
const maxDigits = 18

// int reads an integer into p, or leaves p as it is for null, as
// encoding/json does for an int field.
func (d *usageDecoder) int(p *int) bool {
	if d.null() { // which skipped the whitespace before the value
		return true
	}
	data := d.data
	i := d.pos
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
	d.pos = i
	return true
}

func (d *usageDecoder) bool(p *bool) bool {
	switch {
	case d.literal("true"):
		*p = true
	case d.literal("false"):
		*p = false
	case d.null():
	default:
		return false
	}
	return true
}

// string reads a string into p; null leaves p as it is.
func (d *usageDecoder) string(p *string) bool {
	if d.null() {
		return true
	}
	raw, ok := d.str()
	if !ok {
		return false
	}
	text, ok := d.text(raw)
	if !ok {
		return false
	}
	*p = string(text)
	return true
}

// time reads a time: null sets *p to nil; a string is read by
// time.Time.UnmarshalJSON from its raw bytes into *p, a new time when *p
// is nil, as encoding/json does.
func (d *usageDecoder) time(p **time.Time) bool {
	if d.null() {
		*p = nil
		return true
	}
	raw, ok := d.str()
	if !ok {
		return false
	}
	if hasByte(raw, '\\') {
		return false // unescaping is encoding/json's to do
	}
	var t time.Time
	if t.UnmarshalJSON(raw) != nil {
		return false
	}
	if *p == nil {
		*p = d.newTime()
	}
	**p = t
	return true
}

// state reads a state through State.UnmarshalText; null leaves it.
func (d *usageDecoder) state(p *State) bool { return textValue(d, d.states, p) }

// source reads a source through Source.UnmarshalText; null leaves it.
func (d *usageDecoder) source(p *Source) bool { return textValue(d, d.sources, p) }

// textValue reads a string into *p through its type's UnmarshalText,
// remembered in memo by its raw bytes (a file names a handful of states
// and sources thousands of times); null leaves *p.
func textValue[T any, PT interface {
	*T
	UnmarshalText([]byte) error
}](d *usageDecoder, memo map[string]T, p *T) bool {
	if d.null() {
		return true
	}
	raw, ok := d.str()
	if !ok {
		return false
	}
	if v, ok := memo[string(raw)]; ok {
		*p = v
		return true
	}
	text, ok := d.text(raw)
	var v T
	if !ok || PT(&v).UnmarshalText(text) != nil {
		return false
	}
	memo[string(raw)] = v
	*p = v
	return true
}
