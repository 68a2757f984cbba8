package repository

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/hostenv"
)

// TestIgnoreFSAgreesWithGit: what an IgnoreFS serves of a work tree is
// what git ls-files --others --exclude-standard lists there, rule for
// rule: git itself is the oracle, not a reading of gitignore(5).
func TestIgnoreFSAgreesWithGit(t *testing.T) {
	t.Parallel()
	tree := []string{
		"a.txt", "keep.txt", "b.log", ".env", "x/.env", "x/y/.env",
		"build/out.js", "build/keep.txt", "src/build", "src/main.go",
		"docs/api/a.md", "docs/api/.env", "docs/b.md", "config/.env", "config/c.yaml",
		"deep/1/2/3/cache/f", "deep/cache/g", "cache/h",
		"foo/bar/baz.txt", "foo/qux.txt", "name with space", "sp ", "#hash", "!bang",
		"img/a.PNG", "img/b.png", "[x].txt", "star*.md",
	}
	for _, c := range []struct{ name, ignore string }{
		{"names", ".env\n*.log\n"},
		{"negation", "*.txt\n!keep.txt\n"},
		{"folder rule, and a file of its name", "build/\n"},
		{"no taking back inside an ignored folder", "build/\n!build/keep.txt\n!keep.txt\n"},
		{"negated folder keeps its ignored files ignored", ".env\n!config/\n!docs/api\n"},
		{"negated name of a folder keeps its ignored files ignored", ".env\n!config\n!x\n"},
		{"anchored", "/a.txt\n/docs/api\nfoo/*.txt\n"},
		{"double star", "**/cache\ndeep/**/f\nfoo/**\n"},
		{"trailing double star", "docs/**\n!docs/b.md\n"},
		{"classes and escapes", "[ab].txt\nimg/*.[pP][nN][gG]\n\\#hash\n\\!bang\n\\[x\\].txt\nstar\\*.md\n"},
		{"spaces", "name with space\nsp\\ \n"},
		{"comments and blank lines", "# *.txt\n\n   \n*.log   \n"},
		{"negated class", "img/[!a]*\n"},
		{"everything but", "*\n!*/\n!*.md\n"},
		{"a byte order mark", "\ufeff.env\n*.log\n"},
		{"an escaped slash", "docs\\/api\nfoo\\/bar/\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.NewRepo(t, "main")
			for _, f := range tree {
				r.Write(f, "x\n", 0)
			}
			r.Write(".gitignore", c.ignore, 0)
			var want []string
			for line := range strings.SplitSeq(r.Git("-c", "core.excludesFile=", "ls-files", "--others", "--exclude-standard", "-z"), "\x00") {
				if line != "" {
					want = append(want, line)
				}
			}
			slices.Sort(want)
			d, err := NewDirFS(r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			w, err := GitIgnoring(d, hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
			if err != nil || w == nil {
				t.Fatalf("GitIgnoring: %v, %v", w, err)
			}
			var got []string
			err = fs.WalkDir(w, ".", func(name string, e fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if e.IsDir() && e.Name() == ".git" {
					return fs.SkipDir
				}
				if !e.IsDir() {
					got = append(got, name)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("served %q\ngit lists %q", got, want)
			}
			// What a listing leaves out cannot be opened or stated either.
			for _, f := range tree {
				_, oerr := fs.Stat(w, f)
				if listed := slices.Contains(want, f); listed != (oerr == nil) {
					t.Errorf("stat %s: %v, listed by git: %v", f, oerr, listed)
				}
			}
		})
	}
}

// TestIgnoreFSSub: a Sub of an IgnoreFS is judged by the rules of the
// whole work tree, dot-folders included.
func TestIgnoreFSSub(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "*.env\n", 0)
	r.Write(".claude/skills/tool/a.env", "x\n", 0)
	r.Write(".claude/skills/tool/SKILL.md", "x\n", 0)
	d, err := NewDirFS(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	w, err := GitIgnoring(d, hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	if err != nil || w == nil {
		t.Fatalf("GitIgnoring: %v, %v", w, err)
	}
	sub, err := fs.Sub(w, ".claude/skills")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(sub, "tool")
	if err != nil || len(entries) != 1 || entries[0].Name() != "SKILL.md" {
		t.Fatalf("tool holds %v, %v; want SKILL.md alone", entries, err)
	}
	if _, err := sub.Open("tool/a.env"); err == nil {
		t.Fatal("an ignored file opens through a Sub")
	}
	if got := sub.(*IgnoreFS).Dir(); got != filepath.Join(d.Dir(), ".claude", "skills") {
		t.Fatalf("Dir = %s", got)
	}
}

// TestIgnoreFSNotAWorkTree: a folder in no work tree, or inside a
// repository's own folder, is served whole.
func TestIgnoreFSNotAWorkTree(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	home := t.TempDir()
	env := hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"})
	for _, dir := range []string{t.TempDir(), filepath.Join(r.Dir, ".git")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		d, err := NewDirFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		if w, err := GitIgnoring(d, env); w != nil || err != nil {
			t.Errorf("%s: %v, %v; want nothing", dir, w, err)
		}
	}
}

// TestIgnoreFSBoundsIgnoredEntries: the entries a listing leaves out are
// bounded as the ones it gives are, so a folder of countless ignored
// files is no endless read. Without the bound the listing read them all.
func TestIgnoreFSBoundsIgnoredEntries(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "*.o\n", 0)
	for _, name := range []string{"a.o", "b.o", "c.o", "d.o", "keep.c"} {
		r.Write("build/"+name, "x\n", 0)
	}
	d, err := NewDirFS(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	w, err := GitIgnoring(d, hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	if err != nil || w == nil {
		t.Fatalf("GitIgnoring: %v, %v", w, err)
	}
	w.st.maxDropped = 3
	if entries, err := fs.ReadDir(w, "build"); err == nil || !strings.Contains(err.Error(), "more than 3") {
		t.Fatalf("build lists %v, %v; want the bound's error", entries, err)
	}
}

// TestIgnoreFSNestedRepositoryAndNoExcludes: a repository inside the
// work tree (a submodule, a vendored clone) is judged by its own rules,
// never the outer one's, so a lib/ of the outer .gitignore hides no file
// of a skill cloned below; and core.excludesFile set to /dev/null, how a
// user turns the global excludes off, is no failure.
func TestIgnoreFSNestedRepositoryAndNoExcludes(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "lib/\n.env\n", 0)
	for _, f := range []string{"skills/own/SKILL.md", "skills/own/lib/x.py", "skills/foo/SKILL.md", "skills/foo/lib/helper.py", "skills/foo/.env.example"} {
		r.Write(f, "x\n", 0)
	}
	inner := gittest.NewRepo(t, "main")
	if err := os.Rename(filepath.Join(inner.Dir, ".git"), filepath.Join(r.Dir, "skills", "foo", ".git")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\texcludesFile = /dev/null\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := NewDirFS(filepath.Join(r.Dir, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := GitIgnoring(d, hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	if err != nil || w == nil {
		t.Fatalf("GitIgnoring: %v, %v", w, err)
	}
	for f, want := range map[string]bool{"own/SKILL.md": true, "own/lib/x.py": false, "foo/SKILL.md": true, "foo/lib/helper.py": true} {
		if _, err := fs.Stat(w, f); (err == nil) != want {
			t.Errorf("stat %s: %v, want served %v", f, err, want)
		}
	}
}

// TestIgnoreFSNestedRepositoryOwnRules: a repository inside the work
// tree is judged by its own rules, as git judges it: the .gitignore files
// inside it, from its root, and the user's core.excludesFile. Read whole,
// a cloned skill's .env reached the targets, though a publish of the same
// folder (which finds that repository) left it out.
func TestIgnoreFSNestedRepositoryOwnRules(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "lib/\n", 0)
	r.Write("skills/foo/.gitignore", ".env\n/build/\n", 0)
	for _, f := range []string{"skills/foo/SKILL.md", "skills/foo/lib/helper.py", "skills/foo/.env", "skills/foo/build/x.js",
		"skills/foo/sub/build/y.js", "skills/foo/a.swp", "skills/foo/sub/.env", "skills/bar/.env"} {
		r.Write(f, "x\n", 0)
	}
	inner := gittest.NewRepo(t, "main")
	if err := os.Rename(filepath.Join(inner.Dir, ".git"), filepath.Join(r.Dir, "skills", "foo", ".git")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\texcludesFile = ~/ignores\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "ignores"), []byte("*.swp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := NewDirFS(filepath.Join(r.Dir, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := GitIgnoring(d, hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	if err != nil || w == nil {
		t.Fatalf("GitIgnoring: %v, %v", w, err)
	}
	served := map[string]bool{
		"foo/SKILL.md": true, "foo/lib/helper.py": true, "foo/sub/build/y.js": true, "bar/.env": true,
		"foo/.env": false, "foo/sub/.env": false, "foo/build/x.js": false, "foo/a.swp": false,
	}
	for f, want := range served {
		if _, err := fs.Stat(w, f); (err == nil) != want {
			t.Errorf("stat %s: %v, want served %v", f, err, want)
		}
	}
	// A walk, which lists each folder before it looks inside (the
	// nested repository is then known from foo's listing), serves the
	// same files.
	walker, err := GitIgnoring(d, hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	if err != nil {
		t.Fatal(err)
	}
	walked := map[string]bool{}
	err = fs.WalkDir(walker, ".", func(p string, de fs.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			walked[p] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range served {
		if walked[f] != want {
			t.Errorf("walk: %s served %v, want %v", f, walked[f], want)
		}
	}
}

// TestLayerOf: a skill's folder and its path in its layer give the
// layer's folder; a path the folder does not end with gives the folder
// itself, judged alone, rather than some folder above it.
func TestLayerOf(t *testing.T) {
	t.Parallel()
	root := filepath.FromSlash("/w")
	for _, c := range []struct{ dir, in, top, sub string }{
		{"/w/skills/tool", "skills/tool", "/w", "skills/tool"},
		{"/w/skills/tool", "tool", "/w/skills", "tool"},
		{"/w/skills/tool", ".", "/w/skills/tool", "."},
		{"/w/skills/tool", "", "/w/skills/tool", "."},
		{"/w/skills/tool", "other/tool", "/w/skills/tool", "."},
		{"/w/skills/tool", "a/b/c/skills/tool", "/w/skills/tool", "."},
	} {
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(c.dir, "/w")))
		top, sub := layerOf(dir, c.in)
		want := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(c.top, "/w")))
		if top != want || sub != c.sub {
			t.Errorf("layerOf(%s, %q) = %s, %q; want %s, %q", dir, c.in, top, sub, want, c.sub)
		}
	}
}

// TestIgnoreFSNotARepositoryKeepsTheOuterRules: a folder holding a .git
// that is no repository (an empty folder, a file that names none) is
// judged by the work tree's rules, as git judges it: git descends into
// it, and its .env stays ignored. Taken for a nested repository, it was
// judged by no outer rule and the .env reached the targets.
func TestIgnoreFSNotARepositoryKeepsTheOuterRules(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write(".gitignore", "*.env\n", 0)
	for _, f := range []string{"skills/empty/SKILL.md", "skills/empty/a.env", "skills/file/SKILL.md", "skills/file/a.env",
		"skills/real/SKILL.md", "skills/real/a.env"} {
		r.Write(f, "x\n", 0)
	}
	if err := os.Mkdir(filepath.Join(r.Dir, "skills", "empty", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Write("skills/file/.git", "not a gitdir line\n", 0)
	inner := gittest.NewRepo(t, "main")
	if err := os.Rename(filepath.Join(inner.Dir, ".git"), filepath.Join(r.Dir, "skills", "real", ".git")); err != nil {
		t.Fatal(err)
	}
	var gitSees []string
	for line := range strings.SplitSeq(r.Git("-c", "core.excludesFile=", "status", "--porcelain", "--ignored", "-uall"), "\n") {
		if strings.HasPrefix(line, "!! ") {
			gitSees = append(gitSees, strings.TrimPrefix(line, "!! "))
		}
	}
	if !slices.Contains(gitSees, "skills/empty/a.env") || !slices.Contains(gitSees, "skills/file/a.env") {
		t.Fatalf("git ignores %q; the test expects it to ignore the .env of the folders that are no repository", gitSees)
	}
	home := t.TempDir()
	d, err := NewDirFS(filepath.Join(r.Dir, "skills"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := GitIgnoring(d, hostenv.New(home, []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}))
	if err != nil || w == nil {
		t.Fatalf("GitIgnoring: %v, %v", w, err)
	}
	for f, want := range map[string]bool{
		"empty/SKILL.md": true, "file/SKILL.md": true, "real/SKILL.md": true, "real/a.env": true,
		"empty/a.env": false, "file/a.env": false,
	} {
		if _, err := fs.Stat(w, f); (err == nil) != want {
			t.Errorf("stat %s: %v, want served %v", f, err, want)
		}
	}
}
