package syncrun

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/skillsync/skillsync/materialize"
)

// TestDaemonResult: a report's counts, conflicts per target (named as the
// daemon's metrics name them) and sources carry over; a cache with no
// manifest yet holds no skill of any source and is not dirty.
func TestDaemonResult(t *testing.T) {
	t.Parallel()
	r := NewReport()
	r.Skills = SkillChanges{Added: []string{"team/a", "team/b"}, Updated: []string{"team/c"}}
	r.Files = materialize.Stats{Written: 4, BytesWritten: 100}
	r.Warnings = []string{"w"}
	// Of the target's three conflicts left in place, two stood at the sync
	// before: counted then, not again.
	r.Targets = []materialize.TargetReport{{Dir: "/ws/.claude/skills", Conflicts: []string{"v", "w", "x"}, Standing: 2, Preserved: []string{"y", "z"}}}
	r.Sources = []SourceReport{{Source: "team", Revision: "abc", FetchTime: time.Second, Brought: 7}, {Source: "gone", Status: StatusFailed, Error: "no route"},
		{Source: "half", Status: StatusPartial}}
	partly := fmt.Errorf("%w (1 failed, 0 partly synced, of 2)", ErrPartial)
	res := r.DaemonResult(t.TempDir(), nil, func(dir string) string { return "t:" + dir }, partly)
	if res.Added != 2 || res.Updated != 1 || res.Removed != 0 || res.FilesWritten != 4 || res.BytesWritten != 100 || len(res.Warnings) != 1 || res.CacheDirty || res.Err != "" {
		t.Errorf("DaemonResult = %+v", res)
	}
	if res.Conflicts["t:/ws/.claude/skills"] != 3 {
		t.Errorf("conflicts %v", res.Conflicts)
	}
	if len(res.Sources) != 3 || res.Sources[0].Revision != "abc" || res.Sources[0].FetchDuration != time.Second || res.Sources[0].FetchBytes != 7 ||
		res.Sources[0].Partial != "" || res.Sources[1].Err != "no route" || res.Sources[1].Partial != "" || res.Sources[2].Partial != PartlyWhy || res.Failed() != 1 {
		t.Errorf("sources %+v", res.Sources)
	}
	// A sync that failed beyond its sources (here a target) says so.
	whole := errors.New("place skills in /ws/.claude/skills: not a directory")
	if res := r.DaemonResult(t.TempDir(), nil, func(dir string) string { return dir }, whole); res.Err != whole.Error() || res.Refused {
		t.Errorf("a sync failed at a target: Err %q, Refused %v", res.Err, res.Refused)
	}
	// A target refused: the sources' own results stand.
	refused := fmt.Errorf("target /ws/.claude/skills %w", materialize.ErrTargetLinked)
	if res := r.DaemonResult(t.TempDir(), nil, func(dir string) string { return dir }, refused); res.Err == "" || !res.Refused {
		t.Errorf("a target refused: Err %q, Refused %v", res.Err, res.Refused)
	}
}
