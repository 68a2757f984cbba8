package skill

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes the parser panic, hang or accept a
// skill without the fields every consumer relies on. The seeds are the
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
	})
}
