package skill

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"
	"testing/iotest"
)

// FuzzParse checks that no input makes the parser panic, hang or accept a
// skill without the fields every consumer relies on (a name that is safe
// as a directory name and to print), that loading a file finds what
// parsing its bytes finds, and that an accepted skill's Meta survives
// JSON unchanged. The seeds are the
// files in testdata/frontmatter, so a plain go test runs them.
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob("testdata/frontmatter/*.md")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata/frontmatter: %v", err)
	}
	for _, name := range seeds {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, problems := Parse(data, "")
		checkLoadAgrees(t, data, s, problems)
		if HasError(problems, false) {
			return
		}
		if s.Name == "" || s.Description == "" || !ValidName(s.Name) {
			t.Fatalf("accepted a skill with name %q, description %q", s.Name, s.Description)
		}
		for _, p := range problems {
			if p.Rule == "" || p.Message == "" {
				t.Fatalf("problem without rule or message: %+v", p)
			}
		}
		// What is accepted can be stored and read back unchanged.
		s.File, s.Path = "SKILL.md", "."
		m := s.Meta()
		encoded, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("encode meta: %v", err)
		}
		var back Meta
		if err := json.Unmarshal(encoded, &back); err != nil {
			t.Fatalf("decode meta: %v\n%s", err, encoded)
		}
		if !reflect.DeepEqual(m, back) {
			t.Fatalf("meta changed through JSON:\n%#v\n%#v", m, back)
		}
	})
}

// checkLoadAgrees checks that loading data as a file, read in chunks of any
// size, finds what Parse finds in the bytes.
func checkLoadAgrees(t *testing.T, data []byte, parsed Skill, want []Problem) {
	t.Helper()
	head, capped, _ := scanHead(bytes.NewReader(data))
	oneByte, oneCapped, err := scanHead(iotest.OneByteReader(bytes.NewReader(data)))
	if err != nil || !bytes.Equal(head, oneByte) || capped != oneCapped {
		t.Fatalf("scanHead depends on how the bytes are read: %d/%v vs %d/%v (%v)", len(head), capped, len(oneByte), oneCapped, err)
	}
	if !bytes.HasPrefix(data, head) {
		t.Fatal("scanHead returned bytes that are not a prefix of the file")
	}
	loaded, got := Load(fstest.MapFS{"SKILL.md": {Data: data}}, ".", "")
	if len(got) != len(want) {
		t.Fatalf("Load found %d problems, Parse %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Level != w.Level || g.Rule != w.Rule || g.Line != w.Line || g.Message != w.Message {
			t.Fatalf("problem %d: Load %+v, Parse %+v", i, g, w)
		}
	}
	if loaded.Name != parsed.Name || loaded.Description != parsed.Description {
		t.Fatalf("Load found %q/%q, Parse %q/%q", loaded.Name, loaded.Description, parsed.Name, parsed.Description)
	}
}
