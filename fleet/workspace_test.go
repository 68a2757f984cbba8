package fleet_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/usageerr"
)

// TestWorkspaceNoteSync: a source updated or unchanged is "ok" to the
// fleet, a failed one keeps its status and error, and the sync's error is
// the heartbeat's; a file that cannot be written is a warning.
func TestWorkspaceNoteSync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var warned []string
	w := &fleet.Workspace{SyncFile: filepath.Join(dir, ".fleet-sync.json"), Warn: func(s string) { warned = append(warned, s) }}
	w.NoteSync(errors.New("1 of 3 failed"), []fleet.SourceState{{Source: "a", Status: "updated"}, {Source: "b", Status: "unchanged"},
		{Source: "c", Status: "failed", Error: "no route"}})
	hb := fleet.NewHeartbeat(fleet.Heartbeat{}, w.SyncFile, []string{"a", "b", "c"}, nil)
	if hb.LastError != "1 of 3 failed" {
		t.Errorf("last error %q", hb.LastError)
	}
	for i, want := range []string{"ok", "ok", "failed"} {
		if hb.Sources[i].Status != want {
			t.Errorf("source %s: status %q, want %q", hb.Sources[i].Source, hb.Sources[i].Status, want)
		}
	}
	if hb.Sources[2].Error != "no route" || len(warned) != 0 {
		t.Errorf("source c: %+v, warnings %v", hb.Sources[2], warned)
	}
	w.SyncFile = filepath.Join(dir, "missing", "sub", ".fleet-sync.json")
	w.NoteSync(nil, nil)
	if len(warned) != 1 || !strings.Contains(warned[0], "record the sync's result") {
		t.Errorf("warnings %v, want one for the file not written", warned)
	}
}

// TestWorkspaceRefusesBadRequests: a skill name that is none and a source
// the config does not have are usage errors, found before any store is
// opened (the workspace here names none that could be).
func TestWorkspaceRefusesBadRequests(t *testing.T) {
	t.Parallel()
	w := &fleet.Workspace{Source: func(name string) (fleet.SourceRef, bool) { return fleet.SourceRef{Kind: "git"}, name == "team" }}
	var ue *usageerr.UsageError
	if _, err := w.Status(context.Background(), fleet.StatusOptions{Skill: "../pdf"}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "not a valid skill name") {
		t.Errorf("status of skill ../pdf: %v, want a usage error", err)
	}
	if _, err := w.Usage(context.Background(), fleet.UsageOptions{Source: "nope"}); !errors.As(err, &ue) || !strings.Contains(err.Error(), `"nope" is not in the config`) {
		t.Errorf("usage of source nope: %v, want a usage error", err)
	}
	if _, err := w.CurateSource(context.Background(), "nope", fleet.SourceCurateOptions{}); !errors.As(err, &ue) {
		t.Errorf("curate source nope: %v, want a usage error", err)
	}
	w.Cached = func(string) (string, []string, bool, error) { return "", nil, false, nil }
	if _, err := w.CurateSource(context.Background(), "team", fleet.SourceCurateOptions{}); errors.As(err, &ue) || err == nil || !strings.Contains(err.Error(), "not synced yet") {
		t.Errorf("curate source team, not synced: %v", err)
	}
}

// TestWorkspaceNoteSyncFirstSyncFailed: a new host's first sync that
// failed before anything made skills/ is recorded, and the next push's
// heartbeat reports the failure rather than "unknown".
func TestWorkspaceNoteSyncFirstSyncFailed(t *testing.T) {
	t.Parallel()
	root := t.TempDir() // a workspace with no skills/ yet
	var warned []string
	w := &fleet.Workspace{SyncFile: filepath.Join(root, "skills", ".fleet-sync.json"), Warn: func(s string) { warned = append(warned, s) }}
	w.NoteSync(errors.New("every source failed"), []fleet.SourceState{{Source: "team", Status: "failed", Error: "repository not found"}})
	if len(warned) != 0 {
		t.Fatalf("warnings %v, want none", warned)
	}
	hb := fleet.NewHeartbeat(fleet.Heartbeat{}, w.SyncFile, []string{"team"}, nil)
	if hb.LastError != "every source failed" || hb.Sources[0].Status != "failed" || hb.Sources[0].Error != "repository not found" {
		t.Errorf("heartbeat %+v, want the failed first sync", hb)
	}
}
