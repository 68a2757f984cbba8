package drafts

import (
	"fmt"

	"github.com/skillsync/skillsync/internal/diff"
	"github.com/skillsync/skillsync/skill"
)

// DiffSummary is a file-level comparison of a draft with the skill of its
// name: which files the draft adds, changes and removes.
type DiffSummary struct {
	// Against names the copy compared with: <layer>[:<source>]/<name>.
	Against string   `json:"against"`
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// Same reports whether the draft's files are the skill's files.
func (d DiffSummary) Same() bool { return len(d.Added)+len(d.Changed)+len(d.Removed) == 0 }

// String is the summary in a few words: "+1 ~2 -0 against workspace/pdf".
func (d DiffSummary) String() string {
	return fmt.Sprintf("+%d ~%d -%d against %s", len(d.Added), len(d.Changed), len(d.Removed), d.Against)
}

// skillFiles is a catalog skill's files as the diff reads them.
func skillFiles(s *skill.Skill) diff.Files { return diff.Files{FS: s.Files, List: s.FileList()} }
