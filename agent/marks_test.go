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
		// The way on must not count every call again: the counts are in
		// the usage file already.
		if _, err := LoadState(p); name == "corrupt" && (err == nil || !strings.Contains(err.Error(), "--since 20")) {
			t.Errorf("a corrupt state does not say how to go on without counting again: %v", err)
		}
	}
	if _, err := LoadState(dir); err == nil {
		t.Error("a directory was read as state")
	}
}

// TestSeenIsBounded: past its bound the set forgets the oldest calls and
// treats any call at or before them as seen.
func TestSeenIsBounded(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &Seen{}
	for i := 0; i < 10; i++ {
		s.add(string(rune('a'+i)), base.Add(time.Duration(i)*time.Hour))
	}
	s.trim(4)
	if len(s.IDs) != 4 || !s.Floor.Equal(base.Add(5*time.Hour)) {
		t.Fatalf("trimmed to %d, floor %v", len(s.IDs), s.Floor)
	}
	if !s.has("a", base) || !s.has("new", base.Add(5*time.Hour)) || s.has("new", base.Add(6*time.Hour)) || !s.has("j", base.Add(9*time.Hour)) {
		t.Error("has() after trim")
	}
	long := strings.Repeat("x", 300)
	s.add(long, base.Add(10*time.Hour))
	if !s.has(long, base.Add(10*time.Hour)) || len(seenKey(long)) > 64 {
		t.Error("a long id")
	}
}
