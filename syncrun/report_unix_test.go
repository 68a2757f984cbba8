//go:build unix

package syncrun

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/skillsync/skillsync/materialize"
)

// TestAddFullDisk: the skills a full disk kept from being written are one
// problem that says to free space, and a skill the cache never had is
// not said to keep last good files. A source whose skills were found but
// not written is not said to yield none.
func TestAddFullDisk(t *testing.T) {
	t.Parallel()
	r := NewReport()
	var errs []error
	for _, name := range []string{"a", "b", "c"} {
		errs = append(errs, &materialize.SkillError{Source: "team", Skill: name, Err: fmt.Errorf("write SKILL.md: %w", syscall.ENOSPC)})
	}
	errs = append(errs, &materialize.SkillError{Source: "team", Skill: "d", Err: fmt.Errorf("write x: %w", syscall.EIO)})
	r.add(materialize.Result{Errors: errs}, func(string) bool { return false })
	if len(r.Problems) != 2 {
		t.Fatalf("problems: %+v", r.Problems)
	}
	full, other := r.Problems[1].Message, r.Problems[0].Message
	if !strings.HasPrefix(full, "3 skills of source team could not be written, the disk being full") || !strings.Contains(full, "free space there and sync again") ||
		!strings.HasSuffix(full, "each skill is not in the cache until a sync writes it") {
		t.Errorf("the full disk's problem: %s", full)
	}
	if !strings.HasSuffix(other, "; it is not in the cache until a sync writes it") {
		t.Errorf("a new skill not written: %s", other)
	}
	r.CheckYield(SourceReport{Source: "team", Status: StatusPartial, Unwritten: 4}, 0)
	if len(r.Problems) != 2 {
		t.Errorf("a source whose skills were not written is said to yield none: %+v", r.Problems[2:])
	}
}
