package drafts

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
)

func TestWithName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"---\nname: old\ndescription: D.\n---\nbody name: old\n", "---\nname: rn2\ndescription: D.\n---\nbody name: old\n"},
		{"\ufeff\r\n---\r\ndescription: D.\r\nname:   \"old\"  # c\r\nmetadata:\r\n  name: keep\r\n---\r\n", "\ufeff\r\n---\r\ndescription: D.\r\nname: rn2\r\nmetadata:\r\n  name: keep\r\n---\r\n"},
		{"---\ndescription: D.\n---\n", "---\nname: rn2\ndescription: D.\n---\n"},
		{"---\ndescription: D.\n---\nname: x\n", "---\nname: rn2\ndescription: D.\n---\nname: x\n"},
	} {
		got, ok := withName([]byte(tt.in), "rn2")
		if !ok || string(got) != tt.want {
			t.Errorf("withName(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	for _, in := range []string{"no frontmatter\n", "---\ndescription: never closed\n"} {
		if got, ok := withName([]byte(in), "rn2"); ok || string(got) != in {
			t.Errorf("withName(%q) = %q, %v", in, got, ok)
		}
	}
	if got := yamlScalar("123"); got != `"123"` {
		t.Errorf("yamlScalar(123) = %s", got)
	}
}

// TestProposeUnderANewName: propose --name writes the new name into the
// draft's frontmatter, keeping the rest of SKILL.md, so the draft has no
// name-mismatch and can be promoted; the source folder is not touched.
func TestProposeUnderANewName(t *testing.T) {
	t.Parallel()
	gt := newGate(t, Policy{})
	md := "---\nname: rn\ndescription: Release notes.\n# kept\n---\n\nBody.\n"
	dir := skilltest.Skill(t, t.TempDir(), "rn", "Release notes.", map[string]string{"SKILL.md": md})
	p, err := gt.Propose(context.Background(), dir, ProposeOptions{Name: "rn2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Draft.Problems) > 0 {
		t.Fatalf("problems: %+v", p.Draft.Problems)
	}
	got, err := os.ReadFile(filepath.Join(gt.layout.DraftsDir(), "rn2", "SKILL.md"))
	if want := "---\nname: rn2\ndescription: Release notes.\n# kept\n---\n\nBody.\n"; err != nil || string(got) != want {
		t.Errorf("draft SKILL.md = %q, %v; want %q", got, err, want)
	}
	if src, _ := os.ReadFile(filepath.Join(dir, "SKILL.md")); string(src) != md {
		t.Errorf("the source changed: %q", src)
	}
	if _, err := gt.Promote(context.Background(), "rn2", PromoteOptions{Approver: "bob"}); err != nil {
		t.Errorf("promote: %v", err)
	}
}
