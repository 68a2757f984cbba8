package curator

import (
	"time"
	"unsafe"

	"github.com/skillsync/skillsync/internal/jsonscan"
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
	jsonscan.Scanner
	// doc is the file as read: the keys share its memory (Store.read
	// reads it into a buffer of its own, never written again).
	doc string
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
// would; the caller then uses json.Unmarshal. data must never be written
// again: the keys of the usage share its memory.
func fastDecode(data []byte) (*Usage, bool) {
	d := usageDecoder{
		Scanner: jsonscan.New(data),
		doc:     unsafe.String(unsafe.SliceData(data), len(data)),
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
	ok := d.Fields(func(key []byte) bool {
		switch string(key) {
		case "version":
			return d.Int(&u.Version)
		case "skills":
			if d.Null() {
				u.Skills = nil
				return true
			}
			return d.skills(&u.Skills)
		case "curator":
			return d.Null() || d.curator(&u.Curator)
		case "imports":
			if d.Null() {
				u.Imports = nil
				return true
			}
			return d.imports(&u.Imports)
		}
		return false
	})
	return ok && d.End()
}

// imports reads the imports object: agent names to import ids.
func (d *usageDecoder) imports(p *map[string]string) bool {
	if *p == nil {
		*p = map[string]string{}
	}
	return d.Fields(func(key []byte) bool {
		// Text reads a string as Str returns it, quotes and all.
		name, ok := jsonscan.Text(append(append([]byte{'"'}, key...), '"'))
		if !ok {
			return false
		}
		var id string
		if !d.String(&id) {
			return false
		}
		(*p)[string(name)] = id
		return true
	})
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
	if !d.Begin() {
		return false
	}
	var full [][]skillEntry // blocks of slab entries
	var entries []skillEntry
	for more := d.First(); more; more = d.Next() {
		key, ok := d.KeyIn(d.doc)
		if !ok {
			return false
		}
		var r *SkillUsage
		if !d.Null() {
			r = d.newRecord()
			if !d.record(r) {
				return false
			}
		}
		c, err := ParseCopy(key) // as Copy.UnmarshalText reads it
		if err != nil {
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
	if d.Failed() {
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
	return d.Fields(func(key []byte) bool {
		switch string(key) {
		case "use_count":
			return d.Int(&su.UseCount)
		case "view_count":
			return d.Int(&su.ViewCount)
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
			return d.Bool(&su.Pinned)
		case "days":
			return d.dayMap(&su.Days)
		}
		return false
	})
}

// dayMap reads days: null clears the map; an object adds to it (made if
// nil), each entry starting from a zero count, a null one staying zero.
func (d *usageDecoder) dayMap(p *map[string]DayCount) bool {
	if d.Null() {
		*p = nil
		return true
	}
	if !d.Begin() {
		return false
	}
	if *p == nil {
		*p = map[string]DayCount{}
	}
	m := *p
	for more := d.First(); more; more = d.Next() {
		raw, ok := d.Str()
		if !ok || !d.Colon() {
			return false
		}
		var c DayCount
		if !d.Null() && !d.dayCount(&c) {
			return false
		}
		day, ok := d.intern(raw)
		if !ok {
			return false
		}
		m[day] = c
	}
	return !d.Failed()
}

func (d *usageDecoder) dayCount(c *DayCount) bool {
	return d.Fields(func(key []byte) bool {
		switch string(key) {
		case "uses":
			return d.Int(&c.Uses)
		case "views":
			return d.Int(&c.Views)
		}
		return false
	})
}

func (d *usageDecoder) curator(c *CuratorState) bool {
	return d.Fields(func(key []byte) bool {
		switch string(key) {
		case "last_run_at":
			return d.time(&c.LastRunAt)
		case "last_summary":
			return d.String(&c.LastSummary)
		}
		return false
	})
}

// intern returns the unquoted raw string, one string per distinct key.
func (d *usageDecoder) intern(raw []byte) (string, bool) {
	if s, ok := d.days[string(raw)]; ok {
		return s, true
	}
	text, ok := jsonscan.Text(raw)
	if !ok {
		return "", false
	}
	s := string(text)
	d.days[string(raw)] = s
	return s, true
}

// time reads a time: null sets *p to nil; a string is read by
// time.Time.UnmarshalJSON from its raw bytes into *p, a new time when *p
// is nil, as encoding/json does.
func (d *usageDecoder) time(p **time.Time) bool {
	if d.Null() {
		*p = nil
		return true
	}
	raw, ok := d.Str()
	if !ok {
		return false
	}
	if jsonscan.HasEscape(raw) {
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
	if d.Null() {
		return true
	}
	raw, ok := d.Str()
	if !ok {
		return false
	}
	if v, ok := memo[string(raw)]; ok {
		*p = v
		return true
	}
	text, ok := jsonscan.Text(raw)
	var v T
	if !ok || PT(&v).UnmarshalText(text) != nil {
		return false
	}
	memo[string(raw)] = v
	*p = v
	return true
}
