package fleet_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/fleet"
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
