package buildtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The stamp changes with any file of the module (sources, embedded
// files, go.sum) and with the GO variables of the environment, and not
// with .git or a file git ignores; a stamp file gives its pin back only
// for its own stamp and while the pin is there. It sets GOFLAGS, so it
// runs alone.
func TestStampFollowsWhatTheBuildReads(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	write("go.mod", "module example.com/m\n")
	write("main.go", "package main\nfunc main() {}\n")
	write("assets/page.html", "<p>one</p>\n")
	write(".gitignore", "/bench/out/\n")
	write("bench/out/corpus.json", "{}\n")
	stampOf := func() string {
		t.Helper()
		st, err := stamp(root, "example.com/m")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	first := stampOf()
	if again := stampOf(); again != first {
		t.Fatalf("the same files stamp %s, then %s", first, again)
	}
	write(".git/description", "another\n")
	if st := stampOf(); st != first {
		t.Error("a change in .git changed the stamp")
	}
	write("bench/out/corpus.json", "{\"skills\": 2000}\n")
	if st := stampOf(); st != first {
		t.Error("a change in a file git ignores changed the stamp")
	}
	seen := map[string]string{first: "the first files"}
	for _, c := range []struct{ what, name, data string }{
		{"an embedded file", "assets/page.html", "<p>two</p>\n"},
		{"a source", "main.go", "package main\nfunc main() { println() }\n"},
		{"a new file", "go.sum", "example.org/dep v1.0.0 h1:x\n"},
	} {
		write(c.name, c.data)
		st := stampOf()
		if before, ok := seen[st]; ok {
			t.Errorf("%s: the stamp is the one of %s", c.what, before)
		}
		seen[st] = c.what
	}
	last := stampOf()
	t.Setenv("GOFLAGS", "-tags=other")
	if stampOf() == last {
		t.Error("GOFLAGS did not change the stamp")
	}

	dir := t.TempDir()
	pinned := filepath.Join(dir, "pinned", "abc", "prog")
	if err := os.MkdirAll(filepath.Dir(pinned), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pinned, []byte("program"), 0o700); err != nil {
		t.Fatal(err)
	}
	stampFile := filepath.Join(dir, "prog.stamp")
	if err := atomicWrite(stampFile, last+"\n"+pinned+"\n"); err != nil {
		t.Fatal(err)
	}
	if got, ok := stamped(stampFile, last, filepath.Join(dir, "pinned")); !ok || got != pinned {
		t.Errorf("stamped = %s, %v; want %s", got, ok, pinned)
	}
	if _, ok := stamped(stampFile, first, filepath.Join(dir, "pinned")); ok {
		t.Error("another stamp gave the pin back")
	}
	// A stamp naming a program outside the pins is not followed.
	elsewhere := filepath.Join(dir, "prog")
	if err := os.WriteFile(elsewhere, []byte("planted"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := atomicWrite(stampFile, last+"\n"+elsewhere+"\n"); err != nil {
		t.Fatal(err)
	}
	if got, ok := stamped(stampFile, last, filepath.Join(dir, "pinned")); ok {
		t.Errorf("stamped gave back %s, outside the pins", got)
	}
	if err := atomicWrite(stampFile, last+"\n"+pinned+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pinned); err != nil {
		t.Fatal(err)
	}
	if _, ok := stamped(stampFile, last, filepath.Join(dir, "pinned")); ok {
		t.Error("a pruned pin was given back")
	}
}

// In a cache folder other users may write (a shared temporary folder,
// where there is no cache folder of the user's), nothing is kept: each
// process builds into a folder of its own, so a program or stamp planted
// there is never run. It sets XDG_CACHE_HOME, so it runs alone.
func TestNoBuildKeptInAnOpenFolder(t *testing.T) {
	open, err := os.MkdirTemp("", "buildtest-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	if err := os.Chmod(open, 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", open)
	if err := os.MkdirAll(filepath.Join(open, "skillsync-buildtest"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(open, "skillsync-buildtest"), 0o777); err != nil {
		t.Fatal(err)
	}
	dir, _, err := cacheDir("example.com/m/cmd/prog")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if rel, err := filepath.Rel(open, dir); err == nil && filepath.IsLocal(rel) {
		t.Errorf("the program is kept in %s, in a folder others may write", dir)
	}
	private := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", private)
	dir, _, err = cacheDir("example.com/m/cmd/prog")
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(private, dir); err != nil || !filepath.IsLocal(rel) {
		t.Errorf("the program is kept in %s, not in the user's own cache folder %s", dir, private)
	}
}
