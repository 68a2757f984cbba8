package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository/all"
)

// TestHiddenNames: hidden: takes skill names, checked as a skill's own
// name is once put in its form (skill.ValidName after
// skill.NormalizeName). A name no skill can have hides nothing, and is a
// warning naming the file and the line of the name (a config that loaded
// before the check still loads); a name written twice (compared as the
// catalog compares names, without case) does no harm and is a warning
// naming both lines.
func TestHiddenNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		errs       []string // the first after "FILE", the others anywhere
		warnings   []string // each after "FILE", in order
		hidden     []string // cfg.Hidden when it loads
	}{
		{"names", "hidden: [pdf, Experimental-Thing, docx_v2]\n", nil, nil, []string{"pdf", "Experimental-Thing", "docx_v2"}},
		{"none", "hidden: []\n", nil, nil, []string{}},
		{"null", "hidden:\n", nil, nil, nil},
		{"empty", "strict: true\nhidden: [pdf, \"\"]\n", nil, []string{`:2: hidden: "" is not a skill name (one folder name`}, []string{"pdf", ""}},
		{"spaces only", "strict: true\nhidden: [\"  \"]\n", nil, []string{`:2: hidden: "  " is not a skill name`}, []string{"  "}},
		{"slash", "hidden: [team/pdf]\n", nil, []string{`:1: hidden: "team/pdf" is not a skill name (one folder name: not empty, no / or \`}, []string{"team/pdf"}},
		{"backslash", "hidden: [\"a\\\\b\"]\n", nil, []string{`:1: hidden: "a\\b" is not a skill name`}, []string{"a\\b"}},
		{"dot", "hidden: [.git]\n", nil, []string{`:1: hidden: ".git" is not a skill name`}, []string{".git"}},
		{"dot dot", "hidden: [\"..\"]\n", nil, []string{`:1: hidden: ".." is not a skill name`}, []string{".."}},
		{"newline", "hidden: [\"pd\\nf\"]\n", nil, []string{`:1: hidden: "pd\nf" is not a skill name`}, []string{"pd\nf"}},
		{"escape", "hidden: [\"\\e[31mred\"]\n", nil, []string{`:1: hidden: "\x1b[31mred" is not a skill name`}, []string{"\x1b[31mred"}},
		{"bidi override", "hidden: [\"pdf\\u202e\"]\n", nil, []string{`:1: hidden: "pdf\u202e" is not a skill name`}, []string{"pdf\u202e"}},
		{"too long", "hidden: [" + strings.Repeat("a", 256) + "]\n", nil, []string{`:1: hidden: "aaaa`}, []string{strings.Repeat("a", 256)}},
		{"the line of its item", "strict: true\nhidden:\n  - pdf\n  - \"\"\n", nil, []string{`:4: hidden: "" is not a skill name`}, []string{"pdf", ""}},
		{"every bad name", "hidden:\n  - a/b\n  - pdf\n  - .x\n", nil, []string{`:2: hidden: "a/b"`, `:4: hidden: ".x"`}, []string{"a/b", "pdf", ".x"}},
		{"twice", "hidden: [pdf, pdf]\n", nil, []string{`:1: hidden: "pdf" is there already, as "pdf"; remove one`}, []string{"pdf", "pdf"}},
		{"twice in another case", "strict: true\nhidden:\n  - pdf\n  - docx\n  - PDF\n", nil,
			[]string{`:5: hidden: "PDF" is there already, as "pdf" on line 3 (names compare without case); remove one`}, []string{"pdf", "docx", "PDF"}},
		{"twice with spaces", "hidden: [pdf, \" pdf\"]\n", nil, []string{`:1: hidden: " pdf" is there already, as "pdf"`}, []string{"pdf", " pdf"}},
		{"three times", "hidden: [a, A, a]\n", nil, []string{`:1: hidden: "A" is there already`, `:1: hidden: "a" is there already`}, []string{"a", "A", "a"}},
		{"a glob", "hidden: [pdf, \"experimental-*\"]\n", nil, []string{`:1: hidden: "experimental-*" is read as a name, not a pattern (hidden: takes no globs)`}, []string{"pdf", "experimental-*"}},
		{"not a list", "hidden: pdf\n", []string{`:1: key "hidden" in the config: "pdf" is not a list`}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			cfg, err := Load(path, all.Kinds())
			if tt.errs != nil {
				checkLined(t, path, err, tt.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings = %q, want %d", cfg.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(cfg.Warnings[i], path+w) {
					t.Errorf("warning %q does not start with %q", cfg.Warnings[i], path+w)
				}
			}
			if !slices.Equal(cfg.Hidden, tt.hidden) || (cfg.Hidden == nil) != (tt.hidden == nil) {
				t.Errorf("hidden = %q, want %q", cfg.Hidden, tt.hidden)
			}
		})
	}
}
