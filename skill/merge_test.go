package skill

import (
	"strings"
	"testing"
)

// TestParseMergeKeys: a YAML merge key (<<: *anchor) brings its mapping's
// fields in, as yaml.v3 merges them when it decodes into a map: before,
// the frontmatter walk took << for a field of its own, and a name given
// through it was "missing". A key the mapping has itself wins, and an
// earlier mapping of a merge list over a later one.
func TestParseMergeKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text         string
		wantName, wantDesc string
		want               []string // level:rule
	}{
		{"merged", "---\nx-base: &b\n  name: pdf\n  description: Read PDFs.\n<<: *b\n---\n", "pdf", "Read PDFs.", []string{"warning:field-unknown"}},
		{"own key wins", "---\nx-base: &b\n  name: other\n  description: Read PDFs.\nname: pdf\n<<: *b\n---\n", "pdf", "Read PDFs.", []string{"warning:field-unknown"}},
		{"own alias wins, silently", "---\nx-base: &b\n  name: other\n  description: Read PDFs.\n<<: *b\nskill: pdf\n---\n", "pdf", "Read PDFs.", []string{"warning:field-unknown", "warning:field-alias"}},
		{"earlier of a list wins", "---\nx-a: &a {name: pdf}\nx-b: &b {name: other, description: Read PDFs.}\n<<: [*a, *b]\n---\n", "pdf", "Read PDFs.", []string{"warning:field-unknown", "warning:field-unknown"}},
		{"nested merges", "---\nx-a: &a {description: Read PDFs.}\nx-b: &b {name: pdf, <<: *a}\n<<: *b\n---\n", "pdf", "Read PDFs.", []string{"warning:field-unknown", "warning:field-unknown"}},
		{"a quoted << is a key", "---\nname: pdf\ndescription: x\n\"<<\": y\n---\n", "pdf", "x", []string{"warning:field-unknown"}},
		{"not a mapping", "---\nname: pdf\ndescription: x\n<<: 3\n---\n", "pdf", "x", []string{"warning:field-type"}},
		{"itself", "---\nx-base: &b\n  name: pdf\n  <<: *b\ndescription: x\n<<: *b\n---\n", "", "", []string{"error:frontmatter-aliases"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, problems := Parse([]byte(tt.text), "pdf")
			if got := strings.Join(rules(problems), ","); got != strings.Join(tt.want, ",") || s.Name != tt.wantName || s.Description != tt.wantDesc {
				t.Errorf("name %q description %q, problems %v; want %q %q %v\n%v", s.Name, s.Description, got, tt.wantName, tt.wantDesc, tt.want, problems)
			}
		})
	}

	// Inside a mapping the same: metadata and an unknown field's value.
	s, problems := Parse([]byte("---\nname: pdf\ndescription: x\nx-m: &m {team: docs, level: 3}\nmetadata:\n  <<: *m\n  level: 4\nx-copy:\n  <<: *m\n---\n"), "pdf")
	if s.Metadata["team"] != "docs" || s.Metadata["level"] != "4" || len(s.Metadata) != 2 {
		t.Errorf("merged metadata = %v (%v)", s.Metadata, problems)
	}
	if m, _ := s.Extra["x-copy"].(map[string]any); m["team"] != "docs" || len(m) != 2 {
		t.Errorf("a merged unknown field = %#v", s.Extra["x-copy"])
	}
}
