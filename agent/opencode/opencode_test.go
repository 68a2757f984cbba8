package opencode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestImportSurvivesHostileStorage: a session file that does not parse, a
// session id that would leave the storage, a part that is a link, one
// that is too large and one that does not parse: none stops the import,
// and the good call is found.
func TestImportSurvivesHostileStorage(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "w")
	data := t.TempDir()
	st := filepath.Join(data, "storage")
	skilltest.WriteFile(t, filepath.Join(st, "session", "p", "ses_1.json"), `{"id":"ses_1","directory":"`+ws+`"}`)
	skilltest.WriteFile(t, filepath.Join(st, "session", "p", "bad.json"), `{"id":`)
	skilltest.WriteFile(t, filepath.Join(st, "session", "p", "up.json"), `{"id":"../up","directory":"`+ws+`"}`)
	skilltest.WriteFile(t, filepath.Join(st, "message", "ses_1", "msg_1.json"), `{}`)
	good := `{"type":"tool","callID":"c1","tool":"skill","state":{"status":"completed","input":{"name":"pdf"},"time":{"start":1772359210000}}}`
	skilltest.WriteFile(t, filepath.Join(st, "part", "msg_1", "a.json"), good)
	skilltest.WriteFile(t, filepath.Join(st, "part", "msg_1", "b.json"), `{"type":"tool",`)
	skilltest.WriteFile(t, filepath.Join(st, "part", "msg_1", "c.json"), `{"x":"`+strings.Repeat("y", maxRecord)+`"}`)
	if err := os.Symlink(filepath.Join(st, "part", "msg_1", "a.json"), filepath.Join(st, "part", "msg_1", "d.json")); err != nil {
		t.Fatal(err)
	}
	b, err := New(ws, data).Import(context.Background(), time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 1 || b.Events[0].Skill != "pdf" || b.Events[0].ID != "c1" || b.Malformed != 2 || b.TooLong != 1 ||
		len(b.MalformedAt) != 2 || !strings.HasPrefix(b.MalformedAt[0], st) {
		t.Errorf("batch %+v", b)
	}
	again, err := New(ws, data).Import(context.Background(), time.Time{}, b.Marks)
	if err != nil || len(again.Events) != 0 || again.Files != 0 {
		t.Errorf("again: %+v %v", again, err)
	}
}
