package skill

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// every YAML type a frontmatter value can have, as Extra keeps it.
const everyType = `---
name: pdf
description: "Extract text <and> tables & more \u202e."
license: MIT
compatibility: needs poppler
version: "1.2"
author: Ann
tags: [docs, pdf]
triggers: [convert a pdf]
allowed-tools: Bash(git add:*) Read
metadata:
  team: docs
  level: 3
  nested: {a: 1}
when_to_use: When a PDF arrives.
string: text
quoted: "1"
int: 42
negative: -7
hex: 0x1F
octal: 0o17
big: 18446744073709551615
huge: 99999999999999999999999
float: 1.5
whole-float: 1.0
exp: 6.02e23
inf: .inf
neg-inf: -.inf
nan: .nan
bool: true
"null": ~
empty-string: ""
date: 2001-12-14
timestamp: 2001-12-14t21:59:43.10-05:00
binary: !!binary /w==
custom: !thing value
list: [a, 1, true, null, [x], {k: v}]
empty-list: []
empty-map: {}
map: {z: 1, a: {b: [1.25]}}
anchor: &x {p: q}
alias: *x
unicode: "日本 😀 \x1b"
---
# body
`

func TestMetaRoundTrip(t *testing.T) {
	t.Parallel()
	s, problems := Load(fstest.MapFS{"SKILL.md": {Data: []byte(everyType)}}, "skills/pdf", "pdf")
	if HasError(problems, false) {
		t.Fatal(problems)
	}
	m := s.Meta()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Meta
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("decode: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(m, back) {
		t.Errorf("round trip changed the meta:\n%#v\n%#v", m, back)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("JSON is not stable:\n%s\n%s", data, again)
	}
	r := FromMeta(back, s.Files)
	if r.Name != "pdf" || r.File != "SKILL.md" || r.Path != "skills/pdf" || r.WhenToUse() != "When a PDF arrives." ||
		!reflect.DeepEqual(r.AllowedTools, []string{"Bash(git add:*)", "Read"}) || r.Meta().Extra["big"] != json.Number("18446744073709551615") {
		t.Errorf("FromMeta = %+v", r)
	}
	if body, err := r.ReadBody(); err != nil || body != "# body\n" {
		t.Errorf("ReadBody after FromMeta = %q, %v", body, err)
	}

	want := map[string]any{
		"string": "text", "quoted": "1", "int": json.Number("42"), "negative": json.Number("-7"),
		"hex": json.Number("31"), "octal": json.Number("15"), "big": json.Number("18446744073709551615"),
		"huge": json.Number("1e+23"), "float": json.Number("1.5"), "whole-float": json.Number("1"),
		"exp": json.Number("6.02e+23"), "inf": ".inf", "neg-inf": "-.inf", "nan": ".nan", "bool": true,
		"null": nil, "empty-string": "", "date": "2001-12-14", "timestamp": "2001-12-14t21:59:43.10-05:00",
		"binary": "/w==", "custom": "value",
		"list":       []any{"a", json.Number("1"), true, nil, []any{"x"}, map[string]any{"k": "v"}},
		"empty-list": []any{}, "empty-map": map[string]any{},
		"map":    map[string]any{"z": json.Number("1"), "a": map[string]any{"b": []any{json.Number("1.25")}}},
		"anchor": map[string]any{"p": "q"}, "alias": map[string]any{"p": "q"},
		"unicode":     "日本 😀 \x1b",
		"when_to_use": "When a PDF arrives.",
	}
	for k, v := range want {
		if got, ok := back.Extra[k]; !ok || !reflect.DeepEqual(got, v) {
			t.Errorf("extra %s = %#v, want %#v", k, got, v)
		}
	}
	if len(back.Extra) != len(want) {
		t.Errorf("extra has %d keys, want %d", len(back.Extra), len(want))
	}
	if s.Metadata["level"] != "3" || s.Metadata["nested"] != "a: 1" {
		t.Errorf("metadata = %v", s.Metadata)
	}
}

// The JSON of a Meta does not depend on the order of the frontmatter.
func TestMetaJSONSorted(t *testing.T) {
	t.Parallel()
	a, _ := Parse([]byte("---\nname: a\ndescription: d\nz: 1\nb: {y: 1, c: 2}\nmetadata: {q: 1, e: 2}\n---\n"), "a")
	b, _ := Parse([]byte("---\nmetadata: {e: 2, q: 1}\nb: {c: 2, y: 1}\nz: 1\ndescription: d\nname: a\n---\n"), "a")
	a.File, b.File = "SKILL.md", "SKILL.md"
	a.Path, b.Path = "a", "a"
	ja, _ := json.Marshal(a.Meta())
	jb, _ := json.Marshal(b.Meta())
	want := `{"name":"a","description":"d","metadata":{"e":"2","q":"1"},"extra":{"b":{"c":2,"y":1},"z":1},"file":"SKILL.md","path":"a"}`
	if string(ja) != want || string(jb) != want {
		t.Errorf("JSON:\n%s\n%s\nwant\n%s", ja, jb, want)
	}
}

// A record read back is untrusted: a name that is not a safe directory
// name, or a path out of the source, is refused.
func TestMetaDecodeChecks(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"name":"../../victim","description":"d","file":"SKILL.md","path":"x"}`,
		`{"name":"a\u001b[2J","description":"d","file":"SKILL.md","path":"x"}`,
		`{"name":"a\u202eb","description":"d","file":"SKILL.md","path":"x"}`,
		`{"name":".hidden","description":"d","file":"SKILL.md","path":"x"}`,
		`{"name":"a","description":"","file":"SKILL.md","path":"x"}`,
		`{"name":"a","description":"d","file":"../SKILL.md","path":"x"}`,
		`{"name":"a","description":"d","file":"SKILL.md","path":"../x"}`,
		`{"name":"a","description":"d","file":"SKILL.md","path":"/etc"}`,
		`{"name":"a","description":"d","file":"SKILL.md","path":"x","extra":[1]}`,
	} {
		var m Meta
		err := json.Unmarshal([]byte(doc), &m)
		if err == nil {
			t.Errorf("%s decoded to %+v", doc, m)
		}
		if strings.Contains(doc, `"extra"`) {
			continue
		}
		if !errors.Is(err, ErrBadMeta) {
			t.Errorf("%s: error %v is not ErrBadMeta", doc, err)
		}
	}
	var m Meta
	if err := json.Unmarshal([]byte(`{"name":"a","description":"d","file":"SKILL.md","path":".","tags":[],"metadata":{},"extra":{}}`), &m); err != nil ||
		m.Tags != nil || m.Metadata != nil || m.Extra != nil {
		t.Errorf("empty lists and maps: %+v, %v", m, err)
	}
}
