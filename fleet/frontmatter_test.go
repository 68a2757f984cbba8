package fleet_test

import (
	"strings"
	"testing"

	"github.com/skillsync/skillsync/fleet"
)

func TestSetRollout(t *testing.T) {
	t.Parallel()
	in := "---\nname: pdf\ndescription: Read PDFs. # short\nmetadata:\n  owner: docs-team\n---\n# PDF\n\nBody.\n"
	out, err := fleet.SetRollout([]byte(in), 10, []string{"prod", "staging"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"name: pdf\n", "# short", "owner: docs-team", `rollout: "10%"`, `environments: "prod staging"`, "---\n# PDF\n\nBody.\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in:\n%s", want, s)
		}
	}
	out, err = fleet.SetRollout(out, 50, nil)
	if err != nil || !strings.Contains(string(out), `rollout: "50%"`) || !strings.Contains(string(out), "prod staging") || strings.Contains(string(out), "10%") {
		t.Fatalf("raise to 50%%: %v\n%s", err, out)
	}
	out, err = fleet.SetRollout([]byte("---\nname: x\ndescription: y\n---\nbody\n"), 2.5, []string{})
	if err != nil || !strings.Contains(string(out), "metadata:\n  rollout: \"2.5%\"\n---\nbody\n") {
		t.Fatalf("no metadata yet: %v\n%s", err, out)
	}
	for _, bad := range []string{"no frontmatter", "---\nname: x\n", "---\n- a\n---\n", "---\nmetadata: 3\n---\n"} {
		if _, err := fleet.SetRollout([]byte(bad), 10, nil); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
