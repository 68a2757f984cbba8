package agent

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestHookedClaim: an import claims the calls the hook recorded, once;
// other agents' calls and recent unclaimed ones stay, old ones go.
func TestHookedClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	h := Hooked{Path: filepath.Join(t.TempDir(), ".hooked.jsonl"), Keep: 30 * 24 * time.Hour}
	for _, c := range []struct {
		agent, id string
		at        time.Time
	}{
		{"claude", "toolu_1", now},
		{"claude", "toolu_2", now},
		{"codex", "toolu_1", now},
		{"claude", "toolu_old", now.Add(-31 * 24 * time.Hour)},
		{"claude", "bad id", now},
		{"claude", strings.Repeat("x", 200), now},
	} {
		if err := h.Add(ctx, c.agent, c.id, c.at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := h.Claim(ctx, "claude", []string{"toolu_1", "toolu_9", "toolu_old"}, now)
	if err != nil || len(got) != 2 || !got["toolu_1"] || !got["toolu_old"] {
		t.Fatalf("claimed %v %v", got, err)
	}
	again, err := h.Claim(ctx, "claude", []string{"toolu_1", "toolu_2", "toolu_old"}, now)
	if err != nil || len(again) != 1 || !again["toolu_2"] {
		t.Errorf("second claim %v %v (toolu_1 was claimed, toolu_old too)", again, err)
	}
	// An id that cannot be kept as it is is journaled by its hash, and
	// claimed by the id itself: its call is counted once too.
	long := strings.Repeat("x", 200)
	odd, err := h.Claim(ctx, "claude", []string{"bad id", long}, now)
	if err != nil || len(odd) != 2 || !odd["bad id"] || !odd[long] {
		t.Errorf("claim of ids kept by their hash: %v %v", odd, err)
	}
	// The journal keeps its floor (seqRef) and the codex call.
	data, _ := os.ReadFile(h.Path)
	if strings.Count(string(data), `"agent"`) != 1 || !strings.Contains(string(data), `"codex"`) || !strings.Contains(string(data), `"floor":6`) {
		t.Errorf("journal left:\n%s", data)
	}
	// Calls older than Keep go even unclaimed.
	if _, err := h.Claim(ctx, "claude", []string{"none"}, now.Add(40*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(h.Path); strings.Contains(string(data), `"agent"`) || !strings.Contains(string(data), `"floor":6`) {
		t.Errorf("old calls kept: %s", data)
	}
}

func TestHookedRefusesLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := Hooked{Path: filepath.Join(dir, ".hooked.jsonl")}
	if err := os.Symlink(victim, h.Path); err != nil {
		t.Fatal(err)
	}
	if err := h.Add(context.Background(), "claude", "toolu_1", time.Now()); err == nil {
		t.Error("Add wrote through a link")
	}
	if _, err := h.Claim(context.Background(), "claude", []string{"toolu_1"}, time.Now()); err == nil {
		t.Error("Claim read through a link")
	}
	if data, _ := os.ReadFile(victim); len(data) != 0 {
		t.Errorf("the link's target was written: %s", data)
	}

	// A hard link: the journal's name is the victim's too.
	if runtime.GOOS == "windows" {
		t.Skip("the link count is not told here")
	}
	hard := Hooked{Path: filepath.Join(dir, ".hard.jsonl")}
	if err := os.Link(victim, hard.Path); err != nil {
		t.Skip(err)
	}
	if err := hard.Add(context.Background(), "claude", "toolu_2", time.Now()); err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("Add into a hard link = %v, want a refusal naming the hard links", err)
	}
	if data, _ := os.ReadFile(victim); len(data) != 0 {
		t.Errorf("the hard link's other name was written: %s", data)
	}
}

// TestHookedSkipsAnOverlongLine: a line no entry could be, planted in the
// journal, is skipped; the entries after it are still claimed.
func TestHookedSkipsAnOverlongLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	h := Hooked{Path: filepath.Join(t.TempDir(), ".hooked.jsonl"), Keep: 30 * 24 * time.Hour}
	if err := os.WriteFile(h.Path, []byte(strings.Repeat("x", 200<<10)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.Add(ctx, "claude", "toolu_after", now); err != nil {
		t.Fatal(err)
	}
	got, err := h.Claim(ctx, "claude", []string{"toolu_after"}, now)
	if err != nil || !got["toolu_after"] {
		t.Errorf("the entry after an overlong line: %v %v", got, err)
	}
}

// TestHookedAfterATornLine: a journal whose last line a killed write cut
// short still takes the next call on a line of its own, which a claim
// then finds: the call is not counted again by an import.
func TestHookedAfterATornLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	h := Hooked{Path: filepath.Join(t.TempDir(), ".hooked.jsonl"), Keep: 30 * 24 * time.Hour}
	if err := os.WriteFile(h.Path, []byte(`{"agent":"claude"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.Add(ctx, "claude", "toolu_after", now); err != nil {
		t.Fatal(err)
	}
	if got, err := h.Claim(ctx, "claude", []string{"toolu_after"}, now); err != nil || !got["toolu_after"] {
		t.Errorf("claimed %v %v: the call after a torn line was lost", got, err)
	}
}
