package skillmeta

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/skillsync/skillsync/skill"
)

const rich = `---
name: pdf-tools
description: Fill and merge PDF forms.
license: MIT
compatibility: needs python3
version: "1.2"
author: Ann
tags: [pdf, forms]
triggers: ["merge pdf"]
allowed-tools: Bash(git add:*) Read
metadata:
  team: docs
  tier: "2"
when_to_use: When the user sends a PDF.
disable-model-invocation: false
model: 3
argument-hint: [file]
---
# PDF
`

func parsed(t testing.TB, md string) skill.Meta {
	t.Helper()
	s, problems := skill.Parse([]byte(md), "pdf-tools")
	if skill.HasError(problems, false) {
		t.Fatal(problems)
	}
	s.File, s.Path = "SKILL.md", "skills/pdf-tools"
	return s.Meta()
}

// TestRoundTrip: what Encode writes, Decode gives back as the JSON that
// earlier versions stored gives it back.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, md := range []string{rich, "---\nname: pdf-tools\ndescription: d\n---\n"} {
		m := parsed(t, md)
		data, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(m)
		want, err := Decode(js)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("binary:\n%#v\nJSON:\n%#v", got, want)
		}
		again, _ := Encode(got)
		if string(again) != string(data) {
			t.Error("the encoding is not stable")
		}
	}
}

// TestDecodeChecks: a record is untrusted; a name that is not a safe
// directory name, or a cut record, is refused.
func TestDecodeChecks(t *testing.T) {
	t.Parallel()
	m := parsed(t, rich)
	m.Name = "../x"
	data, _ := Encode(m)
	if _, err := Decode(data); err == nil {
		t.Error("a record naming ../x was taken")
	}
	good, _ := Encode(parsed(t, rich))
	for n := range len(good) {
		if _, err := Decode(good[:n]); err == nil {
			t.Fatalf("a record cut at %d of %d bytes was taken", n, len(good))
		}
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(parsed(f, rich))
	f.Add(good)
	f.Add([]byte(`{"name":"a","description":"d","file":"SKILL.md","path":"a"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err == nil && m.Check() != nil {
			t.Fatalf("an unchecked Meta was returned: %#v", m)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data, _ := Encode(parsed(b, "---\nname: pdf-tools\ndescription: Benchmark skill 5, deploy table review notes skill with output check.\nlicense: MIT\n---\n"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// Decoding a plain record allocates nothing: its strings share the
// record's bytes, and neither the decoder nor the Meta it fills leaves
// the stack. A catalog decodes one record per skill, thousands per
// command.
func TestDecodeOfAPlainRecordAllocatesNothing(t *testing.T) {
	data, err := Encode(skill.Meta{Name: "pdf", Description: "Fill PDF forms.", License: "MIT", File: "SKILL.md", Path: "pdf"})
	if err != nil {
		t.Fatal(err)
	}
	var m skill.Meta
	allocs := testing.AllocsPerRun(100, func() {
		if m, err = Decode(data); err != nil {
			t.Fatal(err)
		}
	})
	if m.Name != "pdf" || m.License != "MIT" {
		t.Fatalf("decoded %+v", m)
	}
	if allocs != 0 {
		t.Errorf("%v allocations to decode a plain record, want none", allocs)
	}
}
