package lock

import (
	"unsafe"

	"github.com/skillsync/skillsync/internal/jsonscan"
	"github.com/skillsync/skillsync/repository"
)

// DecodeFast reads skillsync.lock without reflection (jsonfile.Read
// tries it before encoding/json). A sync, list and prompt read the whole
// lock, a line per skill, and with encoding/json that was a tenth of a
// sync with nothing new in a workspace of 10,000 skills.
//
// It accepts only the shape Write writes (indented or not, fields in any
// order, any of them null) into a File as New makes it, and then builds
// what json.Unmarshal builds: every name and hash without an escape is a
// slice of the file as read. Anything else (an unknown or
// case-variant key, a field or name given twice, a value of another
// type, invalid JSON, trailing data) makes it report false with f
// untouched, and the file goes to encoding/json, so errors and edge
// cases keep their behaviour and messages. The checks (Validate) come
// after either.
func (f *File) DecodeFast(data []byte) bool {
	if len(f.Sources) != 0 {
		return false
	}
	// The names and hashes share data's memory: jsonfile.Read hands over
	// a buffer of the file's own, never written again (FastRecord).
	d := lockDecoder{Scanner: jsonscan.New(data), doc: unsafe.String(unsafe.SliceData(data), len(data))}
	version := f.Version
	var sources map[string]*Source
	var seen fieldSet
	ok := d.Fields(func(key []byte) bool {
		switch string(key) {
		case "version":
			return seen.first(0) && d.Int(&version)
		case "sources":
			return seen.first(1) && d.sources(&sources)
		}
		return false
	})
	if !ok || !d.End() {
		return false
	}
	f.Version = version
	switch {
	case !seen.has(1):
	case sources == nil:
		f.Sources = nil
	default:
		f.Sources = sources
	}
	return true
}

// lockDecoder is one DecodeFast: the scanner, and the file as one string
// for names and hashes to be slices of.
type lockDecoder struct {
	jsonscan.Scanner
	doc string
}

// fieldSet is the fields of one object read so far, by number.
type fieldSet uint8

// first marks field i read and reports whether it was not before.
func (s *fieldSet) first(i uint) bool {
	if s.has(i) {
		return false
	}
	*s |= 1 << i
	return true
}

func (s fieldSet) has(i uint) bool { return s&(1<<i) != 0 }

// sources reads the sources object, or null (a nil map).
func (d *lockDecoder) sources(p *map[string]*Source) bool {
	if d.Null() {
		return true
	}
	if !d.Begin() {
		return false
	}
	m := map[string]*Source{}
	for more := d.First(); more; more = d.Next() {
		name, ok := d.KeyIn(d.doc)
		if !ok {
			return false
		}
		if _, dup := m[name]; dup {
			return false
		}
		var s *Source
		if !d.Null() {
			s = &Source{}
			if !d.source(s) {
				return false
			}
		}
		m[name] = s
	}
	*p = m
	return !d.Failed()
}

// source reads one source's fields into s, which is zero.
func (d *lockDecoder) source(s *Source) bool {
	var seen fieldSet
	return d.Fields(func(key []byte) bool {
		switch string(key) {
		case "type":
			kind := string(s.Type)
			ok := seen.first(0) && d.StringIn(d.doc, &kind)
			s.Type = repository.Kind(kind)
			return ok
		case "url":
			return seen.first(1) && d.StringIn(d.doc, &s.URL)
		case "ref":
			return seen.first(2) && d.StringIn(d.doc, &s.Ref)
		case "revision":
			return seen.first(3) && d.StringIn(d.doc, &s.Revision)
		case "skills":
			return seen.first(4) && d.skills(&s.Skills)
		}
		return false
	})
}

// skillEntry is one member of a source's skills, gathered before the
// map is made to their number.
type skillEntry struct{ name, hash string }

// skills reads a source's skills, name to hash, or null (a nil map).
func (d *lockDecoder) skills(p *map[string]string) bool {
	if d.Null() {
		return true
	}
	if !d.Begin() {
		return false
	}
	var entries []skillEntry
	for more := d.First(); more; more = d.Next() {
		name, ok := d.KeyIn(d.doc)
		if !ok {
			return false
		}
		var hash string
		if !d.StringIn(d.doc, &hash) {
			return false
		}
		entries = append(entries, skillEntry{name, hash})
	}
	if d.Failed() {
		return false
	}
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		if _, dup := m[e.name]; dup {
			return false
		}
		m[e.name] = e.hash
	}
	*p = m
	return true
}
