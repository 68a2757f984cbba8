package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".imported.json")
	s, err := LoadState(path)
	if err != nil || len(s.Agents) != 0 {
		t.Fatalf("missing file: %+v %v", s, err)
	}
	s.Agents["claude"] = Marks{"-w/a.jsonl": {Offset: 10, Size: 12, ModTime: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Hash: "ab"}}
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadState(path)
	if err != nil || back.Agents["claude"]["-w/a.jsonl"] != s.Agents["claude"]["-w/a.jsonl"] {
		t.Errorf("read back %+v %v", back, err)
	}
}

// TestStateRefusesWhatItCannotTrust: a link, a directory, a file that
// does not parse or of a newer version is an error naming the file; a
// link is never followed, on reading or on saving.
func TestStateRefusesWhatItCannotTrust(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(elsewhere, []byte(`{"version":1,"agents":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("link: %v", err)
	}
	s := &State{Version: StateVersion, Agents: map[string]Marks{"claude": {}}}
	if err := s.Save(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("save over a link: %v", err)
	}
	if data, _ := os.ReadFile(elsewhere); string(data) != `{"version":1,"agents":{}}` {
		t.Errorf("Save wrote through a link: %s", data)
	}
	for name, body := range map[string]string{"corrupt": "{", "newer": `{"version":9}`} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadState(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LoadState(dir); err == nil {
		t.Error("a directory was read as state")
	}
}
