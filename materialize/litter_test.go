package materialize

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestExtraFilesIgnoresBrowserLitter: what Finder or Explorer leaves in a
// folder it shows is no file of the user's, and a file listed in another
// Unicode normalization than its record's path is that file where names
// are normalization-blind (macOS; HFS+ lists every name decomposed).
func TestExtraFilesIgnoresBrowserLitter(t *testing.T) {
	t.Parallel()
	const nfc, nfd = "caf\u00e9.md", "cafe\u0301.md"
	for _, c := range []struct {
		name  string
		rules fsRules
		on    []string // files below the skill folder
		rec   []string // the record's paths
		want  []string // extra files, relative
	}{
		{"none", fsRules{}, []string{"SKILL.md", "ref/a.md"}, []string{"SKILL.md", "ref/a.md"}, nil},
		{"user file", fsRules{}, []string{"SKILL.md", "mine.md"}, []string{"SKILL.md"}, []string{"mine.md"}},
		{"Finder", fsRules{}, []string{"SKILL.md", ".DS_Store", "ref/a.md", "ref/.DS_Store"}, []string{"SKILL.md", "ref/a.md"}, nil},
		{"Explorer", fsRules{}, []string{"SKILL.md", "Thumbs.db"}, []string{"SKILL.md"}, nil},
		{"AppleDouble beside its file", fsRules{}, []string{"SKILL.md", "._SKILL.md", "ref/a.md", "._ref"}, []string{"SKILL.md", "ref/a.md"}, nil},
		{"AppleDouble of nothing", fsRules{}, []string{"SKILL.md", "._gone.md"}, []string{"SKILL.md"}, []string{"._gone.md"}},
		{"NFD listing, normalization-blind", fsRules{normBlind: true}, []string{"SKILL.md", nfd}, []string{"SKILL.md", nfc}, nil},
		{"NFC listing of an NFD record, normalization-blind", fsRules{normBlind: true}, []string{"SKILL.md", "r\u00e9f/a.md"}, []string{"SKILL.md", "re\u0301f/a.md"}, nil},
		{"NFD file beside its NFC record, Linux", fsRules{}, []string{"SKILL.md", nfd}, []string{"SKILL.md", nfc}, []string{nfd}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, f := range c.on {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			files := map[string]FileRecord{}
			for _, f := range c.rec {
				files[f] = FileRecord{}
			}
			var got []string
			for _, p := range c.rules.extraFiles(dir, files) {
				rel, _ := filepath.Rel(dir, p)
				got = append(got, filepath.ToSlash(rel))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("extra = %q, want %q", got, c.want)
			}
		})
	}
}

// TestFinderViewIsNoEdit: a .DS_Store that Finder left in a target's
// copy of a skill does not make the copy an edited one: the new version
// replaces it with nothing kept aside, and verify finds no drift.
func TestFinderViewIsNoEdit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sync := copySkillA(t, dir)
	sync(v1)
	write(t, filepath.Join(dir, "a", ".DS_Store"), "Finder's view settings")
	write(t, filepath.Join(dir, "a", "ref", ".DS_Store"), "Finder's view settings")
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("verify with .DS_Store: %v %v", diffs, err)
	}
	v2 := map[string]string{"SKILL.md": v1["SKILL.md"], "scripts/run.sh": v1["scripts/run.sh"], "ref/notes.md": "notes v2", "ref/more.md": "more"}
	rep := sync(v2)
	if len(rep.Preserved) != 0 {
		t.Errorf("a copy Finder looked at was kept as edited: %v", rep.Preserved)
	}
	if readFile(t, filepath.Join(dir, "a", "ref/notes.md")) != "notes v2" {
		t.Error("the new version was not written")
	}
}
