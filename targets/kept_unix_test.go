//go:build unix

package targets

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/materialize"
)

// The list of kept target folders is written, and a corrupt one set
// aside, in the cache folder itself: with the cache swapped for a link
// to a folder outside, nothing there is written or renamed, and the
// sync is warned.
func TestKeptListNotThroughACacheSwappedForALink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		outside string // what the folder the link leads to holds as the list
		write   bool   // writeKept, else readKept
	}{
		{"a list written, none there", "", true},
		{"a list written over one there", `{"version":1,"configs":{}}`, true},
		{"a corrupt list there, read", "not json", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, outside := t.TempDir(), t.TempDir()
			cache := filepath.Join(ws, ".skills-cache")
			if err := os.Mkdir(cache, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(cache, cache+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, cache); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(outside, materialize.TargetsName)
			if tt.outside != "" {
				if err := os.WriteFile(out, []byte(tt.outside), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join(cache, materialize.TargetsName)
			var warnings []string
			if tt.write {
				warnings = writeKept(file, &materialize.TargetList{Configs: map[string][]string{}}, "skillsync.yaml", []string{".claude/skills"})
			} else {
				_, warnings = readKept(file)
			}
			if len(warnings) == 0 {
				t.Error("no warning")
			}
			entries, _ := os.ReadDir(outside)
			switch {
			case tt.outside == "" && len(entries) != 0:
				t.Errorf("written outside the cache: %s", entries[0].Name())
			case tt.outside != "":
				if data, _ := os.ReadFile(out); string(data) != tt.outside || len(entries) != 1 {
					t.Errorf("the list outside the cache holds %q (%d entries there)", data, len(entries))
				}
			}
		})
	}
}
