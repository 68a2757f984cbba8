package skill

import (
	"strings"
	"testing"
)

func TestFolderName(t *testing.T) {
	long := strings.Repeat("ab ", 40)
	for in, want := range map[string]string{
		"pdf":                   "pdf",
		"data-2":                "data-2",
		"Ahrefs Automation":     "ahrefs-automation",
		"my_skill":              "my-skill",
		"PDF":                   "pdf",
		"--a--b--":              "a-b",
		"a  ,b":                 "a-b",
		"Ünïcode Näme":          "ünïcode-näme",
		"!!!":                   "skill",
		"v1.2 (beta)":           "v1-2-beta",
		long:                    strings.TrimRight(strings.ReplaceAll(long, " ", "-")[:64], "-"),
		strings.Repeat("x", 64): strings.Repeat("x", 64),
		strings.Repeat("x", 65): strings.Repeat("x", 64),
	} {
		got := FolderName(in)
		if got != want {
			t.Errorf("FolderName(%q) = %q, want %q", in, got, want)
		}
		if !AgentFolderName(got) {
			t.Errorf("FolderName(%q) = %q is not a folder name agents load", in, got)
		}
	}
	for _, bad := range []string{"", "A", "a_b", "a b", "-a", "a-", "a--b", strings.Repeat("x", 65)} {
		if AgentFolderName(bad) {
			t.Errorf("AgentFolderName(%q) = true", bad)
		}
	}
}
