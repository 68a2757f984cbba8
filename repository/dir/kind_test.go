package dir_test

import (
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository/dir"
)

// TestEmbeddedNamesAreCheckedAsTheConfigLoads: an embedded: entry naming
// a file system the program does not lend is refused by Resolve, which
// the config calls as it loads, with the names there are and the nearest
// one; a driver told no names leaves the check to Open.
func TestEmbeddedNamesAreCheckedAsTheConfigLoads(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		lent  []string
		entry string
		want  []string // substrings of the error; none: it resolves
	}{
		{"lent", []string{"builtin"}, "builtin", nil},
		{"one of several", []string{"builtin", "team"}, "team", nil},
		{"unknown", []string{"builtin", "team"}, "foo", []string{`no skill set named "foo"`, "(it has: builtin, team)"}},
		{"misspelt", []string{"team", "builtin"}, "buitlin", []string{`"buitlin"`, "did you mean builtin?", "(it has: builtin, team)"}},
		{"case", []string{"builtin"}, "Builtin", []string{"did you mean builtin?"}},
		{"far from all", []string{"builtin"}, "acme-corp-skills", []string{`no skill set named "acme-corp-skills"`}},
		{"empty", []string{"builtin"}, "", []string{"embedded: is empty", "(it has: builtin)"}},
		{"none lent: any name", nil, "foo", nil},
		{"none lent: empty", nil, "", []string{"embedded: is empty", "such as builtin"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := dir.EmbeddedDriver(tt.lent...).Settings().(*dir.EmbeddedSettings)
			s.Name = tt.entry
			got, err := s.Resolve(t.TempDir())
			if len(tt.want) == 0 {
				if err != nil || got != tt.entry {
					t.Fatalf("Resolve = %q, %v; want %q", got, err, tt.entry)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve = %q, want an error", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.name == "far from all" && strings.Contains(err.Error(), "did you mean") {
				t.Errorf("error %q suggests a name far from the one given", err)
			}
		})
	}
}
