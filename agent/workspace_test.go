package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWorkspace: a path is in the workspace by the folder as configured
// or as its link resolves, never by a relative path or one that leaves it
// with ".."; a path under the resolved folder is written under the
// configured one.
func TestWorkspace(t *testing.T) {
	real := filepath.Join(t.TempDir(), "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	real, _ = filepath.EvalSymlinks(real)
	w := NewWorkspace(link + string(filepath.Separator))
	for p, want := range map[string]bool{
		link:                           true,
		filepath.Join(link, "a", "b"):  true,
		real:                           true,
		filepath.Join(real, "sub"):     true,
		link + "-other":                false,
		filepath.Join(link, "..", "x"): false,
		link + string(filepath.Separator) + filepath.Join("..", "x"): false,
		"":         false,
		"real/sub": false,
	} {
		if got := w.Within(p); got != want {
			t.Errorf("Within(%q) = %v", p, got)
		}
	}
	if got := w.Configured(filepath.Join(real, "s", "SKILL.md")); got != filepath.Join(link, "s", "SKILL.md") {
		t.Errorf("Configured = %q", got)
	}
	if got := w.Configured("/elsewhere/SKILL.md"); got != "/elsewhere/SKILL.md" {
		t.Errorf("Configured elsewhere = %q", got)
	}
}

// TestWorkspaceLeavesNestedOnesOut: a folder below the workspace with a
// cache of its own is another workspace, and so is all below it; its
// neighbours and the folders above it stay in, and so does a folder with
// only a config (one naming its workspace elsewhere, workspace: ..).
func TestWorkspaceLeavesNestedOnesOut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	inner := filepath.Join(root, "team", "inner")
	if err := os.MkdirAll(filepath.Join(inner, "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, inner} {
		if err := os.Mkdir(filepath.Join(dir, ".skills-cache"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tools := filepath.Join(root, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "skillsync.yaml"), []byte("workspace: ..\nrepositories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outer, nested := NewWorkspace(root), NewWorkspace(inner)
	for p, want := range map[string][2]bool{ // Within of the outer, of the inner
		root:                          {true, false},
		filepath.Join(root, "team"):   {true, false},
		filepath.Join(root, "other"):  {true, false},
		inner:                         {false, true},
		filepath.Join(inner, "deep"):  {false, true},
		filepath.Join(inner, "new"):   {false, true},
		filepath.Join(root, "inner2"): {true, false},
		tools:                         {true, false},
	} {
		if got := [2]bool{outer.Within(p), nested.Within(p)}; got != want {
			t.Errorf("Within(%q): outer %v, inner %v; want %v", p, got[0], got[1], want)
		}
	}
}

// TestANestedWorkspaceWithoutItsCacheIsStillOne: the cache is disposable;
// a nested workspace whose cache was removed (to be rebuilt by its next
// sync) keeps its config and its own usage file, and stays another
// workspace: the outer one reading its sessions meanwhile would count its
// calls a second time.
func TestANestedWorkspaceWithoutItsCacheIsStillOne(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	inner := filepath.Join(root, "inner")
	if err := os.MkdirAll(filepath.Join(inner, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(inner, "skillsync.yaml"), filepath.Join(inner, "skills", ".usage.json")} {
		if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outer := NewWorkspace(root)
	for _, p := range []string{inner, filepath.Join(inner, "deep")} {
		if outer.Within(p) {
			t.Errorf("Within(%q) of the outer workspace: true, want false", p)
		}
	}
	if !NewWorkspace(inner).Within(filepath.Join(inner, "deep")) {
		t.Errorf("the nested workspace lost its own folder")
	}
}
