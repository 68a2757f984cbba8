package materialize

import (
	"slices"
	"sync"
	"testing"
)

func TestExcludedOfAndBrought(t *testing.T) {
	t.Parallel()
	var none *SourceRecord
	if none.ExcludedOf(map[string]bool{"a": true}) != nil || none.Brought([]Change{{Name: "a"}}) != 0 {
		t.Error("a source the cache does not hold excludes or brought something")
	}
	rec := &SourceRecord{Excluded: []string{"old"}, Skills: map[string]*SkillRecord{
		"pdf": {Files: map[string]FileRecord{"SKILL.md": {Size: 10}, "ref.md": {Size: 5}}},
		"doc": {Files: map[string]FileRecord{"SKILL.md": {Size: 7}}},
	}}
	if got := rec.ExcludedOf(map[string]bool{"pdf": true, "old": true, "never": true}); !slices.Equal(got, []string{"old", "pdf"}) {
		t.Errorf("excluded %v, want old and pdf", got)
	}
	if got := rec.Brought([]Change{{Name: "pdf", Op: Added}, {Name: "doc", Op: Removed}, {Name: "gone", Op: Updated}}); got != 15 {
		t.Errorf("brought %d bytes, want 15", got)
	}
}

// Known reads no file records until it is first asked (a sync whose
// sources did not change asks nothing), and may then be asked from
// several goroutines at once.
func TestKnownLoadsAtTheFirstQuestion(t *testing.T) {
	t.Parallel()
	rec := &SourceRecord{Discovery: "d", Skills: map[string]*SkillRecord{}}
	c := &Cache{root: t.TempDir(), manifest: &Manifest{Sources: map[string]*SourceRecord{"s": rec}}}
	known := c.Known("s", "d")
	if rec.filesLoaded || rec.filesLost {
		t.Fatal("Known read the file records before any question")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, ok := known("tree:abc"); ok {
				t.Error("an unknown tree is known")
			}
		})
	}
	wg.Wait()
	if !rec.filesLoaded && !rec.filesLost {
		t.Error("the first question did not read the file records")
	}
}
