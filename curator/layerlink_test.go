package curator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayerLinkNamesTheFix: a workspace's skills/ that is a symbolic link
// is refused by every write (a use, as the agents' hooks record, the
// audit log), and the refusal says what to do: make it a real folder, or
// set workspace: where the link leads. Before, it said "remove it", which
// took the layer's skills away. Nothing is written where the link leads.
func TestLayerLinkNamesTheFix(t *testing.T) {
	t.Parallel()
	ws, elsewhere := t.TempDir(), t.TempDir()
	real := filepath.Join(elsewhere, "skills")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(ws, "skills")
	if err := os.Symlink(real, layer); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	_, err := NewStore(layer).Record(context.Background(), Use{Copy: mustCopy(t, "workspace/pdf"), From: "hook", At: now, Actor: "test"})
	var le *LayerLinkError
	if !errors.As(err, &le) || !errors.Is(err, ErrSymlink) {
		t.Fatalf("a use through a linked layer: %v", err)
	}
	for _, want := range []string{layer + " is a symbolic link to " + real, "make " + layer + " a real folder", "set workspace: " + elsewhere + " in the config"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	if err := NewAudit(layer).Append(Event{TS: now, Actor: "test", Op: "archive", Target: "workspace/pdf"}); !errors.As(err, &le) {
		t.Errorf("the audit log through a linked layer: %v", err)
	}
	if entries, _ := os.ReadDir(real); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
	// A link whose folder is named otherwise has one fix.
	other := filepath.Join(t.TempDir(), "skills")
	if err := os.Symlink(elsewhere, other); err != nil {
		t.Fatal(err)
	}
	if err := LayerLink(other); err == nil || strings.Contains(err.Error(), "workspace:") {
		t.Errorf("a link to a folder not named skills: %v", err)
	}
	if err := LayerLink(real); err != nil {
		t.Errorf("a real folder: %v", err)
	}
}
