package skill

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestPlaceholderDescription: the description skillsync new writes when
// given none is a warning (an error under strict) at its line, naming
// SKILL.md and saying to write the description, however it is spaced or
// cased; a real description, or one that merely mentions the words, is
// not.
func TestPlaceholderDescription(t *testing.T) {
	t.Parallel()
	for _, desc := range []string{PlaceholderDescription, "  replace this with what the skill does  and when to use it. ", `"` + PlaceholderDescription + `"`} {
		md := "---\nname: a\ndescription: " + desc + "\n---\n# a\n"
		s, problems := Load(fstest.MapFS{"SKILL.md": {Data: []byte(md)}}, "skills/a", "a")
		if got := rules(problems); len(got) != 1 || got[0] != "warning:description-placeholder" {
			t.Fatalf("description %q: %v", desc, got)
		}
		p := problems[0]
		if p.File != "skills/a/SKILL.md" || p.Line != 3 || p.Skill != "a" || !strings.Contains(p.Message, "SKILL.md") || !strings.Contains(p.Message, "write") || s.Name != "a" {
			t.Errorf("description %q: %+v", desc, p)
		}
		if got := rules(Strict(problems)); len(got) != 1 || got[0] != "error:description-placeholder" || HasError(problems, false) || !HasError(problems, true) {
			t.Errorf("description %q in strict mode: %v", desc, got)
		}
	}
	for _, desc := range []string{"Write release notes. Use when a release is cut.", "Replace this with what the skill does and when to use it. Then ship it."} {
		if _, problems := Parse([]byte("---\nname: a\ndescription: "+desc+"\n---\n"), "a"); len(problems) != 0 {
			t.Errorf("description %q: %v", desc, rules(problems))
		}
	}
}
