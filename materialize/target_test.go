package materialize

import (
	"os"
	"path/filepath"
	"testing"
)

// sameFolderIn finds the record's folder that is the same directory under
// a name differing only in case (as a case-folding file system shows it;
// here a link stands in for that second name), and nothing else.
func TestSameFolderIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"Foo", "Bar", "other"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("Foo", filepath.Join(dir, "foo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(dir, "bar")); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{"Foo": "skill Foo", "Bar": "skill Bar", "other": "skill other"}
	if got, ok := sameFolderIn(dir, "foo", m); !ok || got != "skill Foo" {
		t.Errorf("foo: %q %v, want the record's Foo", got, ok)
	}
	if got, ok := sameFolderIn(dir, "bar", m); ok {
		t.Errorf("bar (another directory, same name but for case): %q", got)
	}
	if got, ok := sameFolderIn(dir, "Foo", m); ok {
		t.Errorf("Foo itself: %q", got)
	}
	if got, ok := sameFolderIn(dir, "missing", m); ok {
		t.Errorf("missing: %q", got)
	}
}
