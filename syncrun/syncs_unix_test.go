//go:build unix

package syncrun

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/materialize"
)

// The record of syncs goes into the cache folder the sync opened and
// locked: a .skills-cache swapped for a link to a folder outside after
// it was opened is not written through, nor is a link found in the
// record's place removed there.
func TestRecordSyncsNotThroughACacheSwappedForALink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		outside string // what the folder the link leads to holds as the record: "" nothing, "link" a link
	}{
		{"nothing there", ""},
		{"a record there", `{"version":1,"sources":{}}`},
		{"a link there", "link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, outside := t.TempDir(), t.TempDir()
			root := filepath.Join(ws, ".skills-cache")
			r := recordRun(t, root, SourceReport{Source: "team"})
			rec := filepath.Join(outside, materialize.SyncsName)
			switch tt.outside {
			case "":
			case "link":
				if err := os.Symlink("elsewhere", rec); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(rec, []byte(tt.outside), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Rename(root, root+".moved"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, root); err != nil {
				t.Fatal(err)
			}
			r.RecordSyncs(time.Date(2026, 3, 9, 1, 0, 0, 0, time.UTC), Options{}, nil)
			entries, _ := os.ReadDir(outside)
			switch {
			case tt.outside == "" && len(entries) != 0:
				t.Errorf("written outside the cache: %s", entries[0].Name())
			case tt.outside == "link":
				if got, err := os.Readlink(rec); err != nil || got != "elsewhere" {
					t.Errorf("the link outside the cache: %q, %v", got, err)
				}
			case tt.outside != "":
				if data, _ := os.ReadFile(rec); string(data) != tt.outside || len(entries) != 1 {
					t.Errorf("the record outside the cache holds %q (%d entries there)", data, len(entries))
				}
			}
			s, err := ReadSyncs(filepath.Join(root+".moved", materialize.SyncsName))
			if err != nil || s.Sources["team"].LastAttempt == nil {
				t.Errorf("the cache it opened: %+v, %v", s, err)
			}
		})
	}
}
