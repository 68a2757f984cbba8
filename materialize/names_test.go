package materialize

import (
	"strings"
	"testing"
)

// TestCheckFilePath: every rule of a skill's file path, and which one a
// path that breaks several is refused by (the first, left to right).
func TestCheckFilePath(t *testing.T) {
	long := strings.Repeat("a", 256)
	cases := []struct {
		path string
		want string // a part of the error, "" for none
	}{
		{"SKILL.md", ""},
		{"scripts/run.sh", ""},
		{".env.example", ""},
		{"a/.hidden/b", ""},
		{"ünïcode/日本.md", ""},
		{"a/" + strings.Repeat("b", 255), ""},
		{"", "empty file path"},
		{"\xff.md", "not valid UTF-8"},
		{strings.Repeat("a/", 600) + "b", "longer than 1024 bytes"},
		{"/abs", "not a clean relative path"},
		{"a//b", "not a clean relative path"},
		{"a/", "not a clean relative path"},
		{".", "not a clean relative path"},
		{"..", "not a clean relative path"},
		{"a/../b", "not a clean relative path"},
		{"a/./b", "not a clean relative path"},
		{"...", ""},
		{"a\\b", `holds "\" or NUL`},
		{"a\x00b", `holds "\" or NUL`},
		{"\\", `holds "\" or NUL`},
		{long, "element longer than 255 bytes"},
		{"a/" + long + "/b", "element longer than 255 bytes"},
		// The first element that breaks a rule names the rule.
		{"../a\\b", "not a clean relative path"},
		{"a\\b/../c", `holds "\" or NUL`},
		{long + "/a\\b", "element longer than 255 bytes"},
		{strings.Repeat("x", 280) + "\\", `holds "\" or NUL`},
	}
	for _, tc := range cases {
		err := checkFilePath(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.40q: %v", tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.40q: error %v, want one saying %q", tc.path, err, tc.want)
		}
	}
}

func BenchmarkCheckFilePath(b *testing.B) {
	paths := []string{"SKILL.md", "references/deep/nested/ref-2.md", "scripts/tool-4.sh", "assets/data-3.txt"}
	for b.Loop() {
		for _, p := range paths {
			if checkFilePath(p) != nil {
				b.Fatal(p)
			}
		}
	}
}
