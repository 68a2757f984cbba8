package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// TestALockedOutHookBesideAnImportsRewriteKeepsItsCall: a hook locked
// out of the journal writes its call's line after an import rewriting
// the journal (Take) read it again and before the rewrite takes its
// place. The rewrite lacks the line; the hook finds the seal the import
// wrote before its read, waits for the import to be done and writes the
// line again. Lost, the call was counted again by the next import where
// another hook's name of its call took its place in the usage file.
func TestALockedOutHookBesideAnImportsRewriteKeepsItsCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	h := Hooked{Path: filepath.Join(t.TempDir(), ".hooked.jsonl"), Keep: 30 * 24 * time.Hour}
	if err := h.Add(ctx, "claude", "toolu_1", now); err != nil {
		t.Fatal(err)
	}
	hold, err := h.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	// Take up to its write: toolu_1 is claimed.
	data, changed := hold.rewrite("claude", map[string]bool{"toolu_1": true}, now)
	if !changed {
		t.Fatal("the rewrite claims nothing")
	}
	seq := hold.log.next(seqRef{})
	done := make(chan error, 1)
	go func() { done <- h.appendUnlocked(ctx, "claude", "toolu_2", now, seq) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if data, _ := os.ReadFile(h.Path); strings.Contains(string(data), "toolu_2") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hook wrote no line")
		}
	}
	if err := atomicfile.WriteFile(h.Path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	hold.Close()
	if err := <-done; err != nil {
		t.Fatalf("the locked-out hook: %v", err)
	}
	log, err := h.readLog()
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, e := range log.entries {
		calls = append(calls, e.ID)
		if e.ID == "toolu_2" && e.Seq != seq.N {
			t.Errorf("toolu_2 numbered %d, want %d", e.Seq, seq.N)
		}
	}
	if len(calls) != 1 || calls[0] != "toolu_2" {
		t.Errorf("the journal holds %v, want toolu_2 alone", calls)
	}
	if l := log.latest(seq.Journal); l != seq.N {
		t.Errorf("the journal's latest is %d, want %d", l, seq.N)
	}
}
