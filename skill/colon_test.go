package skill

import (
	"strings"
	"testing"
)

// TestUnquotedColonHint: a description holding ": " unquoted is not YAML,
// and yaml.v3 says only "mapping values are not allowed in this
// context"; the problem keeps its line and says to quote the value, with
// the line at fault as the example.
func TestUnquotedColonHint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"description", "---\nname: deploy\ndescription: Deploy: build and ship\n---\n", 3, `a value holding ": " must be quoted: description: "Deploy: build and ship"`},
		{"a quote in it", "\n---\nname: deploy\ndescription: Say \"hi\": then go\n---\n", 4, `must be quoted: description: "Say \"hi\": then go"`},
		{"no line to quote", "---\nname: deploy\ndescription: x\n  a: b\n---\n", 0, `must be quoted: description: "Deploy: build and ship"`},
		{"another mistake", "---\nname: [unclosed\n---\n", 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := Parse([]byte(tt.text), "deploy")
			if len(problems) != 1 || problems[0].Rule != "frontmatter-yaml" {
				t.Fatalf("problems = %+v", problems)
			}
			p := problems[0]
			if tt.line != 0 && p.Line != tt.line {
				t.Errorf("line %d, want %d", p.Line, tt.line)
			}
			if tt.want == "" {
				if strings.Contains(p.Message, "must be quoted") {
					t.Errorf("a hint for another mistake: %s", p.Message)
				}
				return
			}
			if !strings.Contains(p.Message, "mapping values are not allowed") || !strings.Contains(p.Message, tt.want) {
				t.Errorf("message %q\nwant %q", p.Message, tt.want)
			}
		})
	}
}
