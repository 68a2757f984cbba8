package buildtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A pinned program keeps what was built when it was pinned, whatever a
// later build writes to the target; pins unused for a day go.
func TestPinKeepsEachBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "prog")
	write := func(s string) {
		if err := os.WriteFile(target, []byte(s), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write("v1")
	first, err := pin(dir, target)
	if err != nil {
		t.Fatal(err)
	}
	write("v2")
	second, err := pin(dir, target)
	if err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Fatalf("two builds pinned at one path %s", first)
	}
	if data, _ := os.ReadFile(first); string(data) != "v1" {
		t.Errorf("the first pin holds %q after a second build", data)
	}
	if again, err := pin(dir, target); err != nil || again != second {
		t.Errorf("the same build pinned again at %s (%v), want %s", again, err, second)
	}
	old := time.Now().Add(-2 * keepPinned)
	if err := os.Chtimes(filepath.Dir(first), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := pin(dir, target); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("a pin unused for two days is still there: %v", err)
	}
	if _, err := os.Stat(second); err != nil {
		t.Errorf("the pin in use was removed: %v", err)
	}
}
