package jsonscan

import (
	"encoding/json"
	"testing"
)

// Str takes the strings JSON takes and no other; what Text makes of one
// is what encoding/json makes of it.
func TestStrAndText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`"plain"`, true},
		{`""`, true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, true},
		{`"\u00e9\u0041"`, true},
		{`"\ud800"`, true},
		{"\"\xff\xfe\"", true},
		{`"日本"`, true},
		{`"a` + "\x01" + `"`, false},
		{`"\x"`, false},
		{`"\u12"`, false},
		{`"\u12g4"`, false},
		{`"open`, false},
		{`"ends with a backslash\`, false},
		{`plain`, false},
	} {
		s := New([]byte(tc.doc))
		raw, ok := s.Str()
		var want string
		valid := json.Unmarshal([]byte(tc.doc), &want) == nil
		if ok != tc.ok || ok != valid {
			t.Errorf("Str(%q) = %v, want %v (encoding/json: %v)", tc.doc, ok, tc.ok, valid)
			continue
		}
		if !ok {
			continue
		}
		if text, ok := Text(raw); !ok || string(text) != want {
			t.Errorf("Text(%q) = %q %v, want %q", raw, text, ok, want)
		}
		var got string
		if s := New([]byte(tc.doc)); !s.StringIn(tc.doc, &got) || got != want {
			t.Errorf("StringIn(%q) = %q, want %q", tc.doc, got, want)
		}
	}
}

// A plain string becomes a slice of the document: reading thousands of
// names allocates nothing for them.
func TestStringInSharesTheDocument(t *testing.T) {
	doc := `{"name": "skill-00001", "hash": "00ff"}`
	data := []byte(doc)
	var name, hash string
	allocs := testing.AllocsPerRun(100, func() {
		s := New(data)
		s.Fields(func(key []byte) bool {
			switch string(key) {
			case "name":
				return s.StringIn(doc, &name)
			case "hash":
				return s.StringIn(doc, &hash)
			}
			return false
		})
	})
	if name != "skill-00001" || hash != "00ff" {
		t.Fatalf("read %q and %q", name, hash)
	}
	if allocs != 0 {
		t.Errorf("%v allocations to read two plain strings, want none", allocs)
	}
	var key string
	s := New(data)
	if !s.Begin() || !s.First() {
		t.Fatal("no member")
	}
	if key, _ = s.KeyIn(doc); key != "name" {
		t.Errorf("KeyIn = %q", key)
	}
}

// Int reads the integers encoding/json reads into an int, gives up on
// the rest, and leaves its target alone for null.
func TestInt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		want int
		ok   bool
	}{
		{`{"n":0}`, 0, true},
		{`{"n":-12}`, -12, true},
		{`{"n":123456789012345678}`, 123456789012345678, true},
		{`{"n":null}`, 7, true},
		{`{"n":1234567890123456789}`, 0, false}, // too long to be sure of
		{`{"n":01}`, 0, false},
		{`{"n":1.5}`, 0, false},
		{`{"n":1e3}`, 0, false},
		{`{"n":-}`, 0, false},
		{`{"n":"1"}`, 0, false},
		{`{"n":nullx}`, 0, false},
	} {
		n := 7
		s := New([]byte(tc.doc))
		ok := s.Fields(func(key []byte) bool { return string(key) == "n" && s.Int(&n) }) && s.End()
		if ok != tc.ok || (ok && n != tc.want) {
			t.Errorf("Int in %s = %d %v, want %d %v", tc.doc, n, ok, tc.want, tc.ok)
		}
	}
}
