package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// trees runs f on a Tree of a new folder as each way of resolving paths
// there is: openat2 and, forced, the walk one component at a time.
func trees(t *testing.T, f func(t *testing.T, dir string, tr *Tree)) {
	for _, walk := range []bool{false, true} {
		name := "resolve"
		if walk {
			name = "walk"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			tr, err := OpenTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tr.Close() })
			if walk {
				forceWalk(tr)
			}
			f(t, dir, tr)
		})
	}
}

func TestTreeOps(t *testing.T) {
	cases := []struct {
		name string
		do   func(tr *Tree) error
		// want are the files (content) and folders ("/") after, below the tree.
		want map[string]string
	}{
		{"mkdir and create", func(tr *Tree) error {
			if err := tr.Mkdir("a", 0o755); err != nil {
				return err
			}
			f, err := tr.OpenFile(filepath.Join("a", "f"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			f.WriteString("x")
			return f.Close()
		}, map[string]string{"a": "/", "a/f": "x"}},
		{"rename across folders", func(tr *Tree) error {
			if err := tr.Mkdir("a", 0o755); err != nil {
				return err
			}
			if err := tr.Mkdir("b", 0o755); err != nil {
				return err
			}
			f, _ := tr.OpenFile(filepath.Join("a", "f"), os.O_WRONLY|os.O_CREATE, 0o644)
			f.Close()
			return tr.Rename(filepath.Join("a", "f"), filepath.Join("b", "g"))
		}, map[string]string{"a": "/", "b": "/", "b/g": ""}},
		{"link and remove", func(tr *Tree) error {
			f, _ := tr.OpenFile("f", os.O_WRONLY|os.O_CREATE, 0o644)
			f.WriteString("y")
			f.Close()
			if err := tr.Link("f", "g"); err != nil {
				return err
			}
			return tr.Remove("f")
		}, map[string]string{"g": "y"}},
		{"remove all", func(tr *Tree) error {
			for _, d := range []string{"a", filepath.Join("a", "b"), filepath.Join("a", "b", "c")} {
				if err := tr.Mkdir(d, 0o755); err != nil {
					return err
				}
			}
			f, _ := tr.OpenFile(filepath.Join("a", "b", "f"), os.O_WRONLY|os.O_CREATE, 0o644)
			f.Close()
			if err := tr.RemoveAll("a"); err != nil {
				return err
			}
			return tr.RemoveAll("missing")
		}, map[string]string{}},
		{"exchange", func(tr *Tree) error {
			tr.Mkdir("a", 0o755)
			tr.Mkdir("b", 0o755)
			f, _ := tr.OpenFile(filepath.Join("a", "f"), os.O_WRONLY|os.O_CREATE, 0o644)
			f.Close()
			err := tr.Exchange("a", "b")
			if errors.Is(err, ErrNoExchange) {
				return tr.Rename(filepath.Join("a", "f"), filepath.Join("b", "f"))
			}
			return err
		}, map[string]string{"a": "/", "b": "/", "b/f": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trees(t, func(t *testing.T, dir string, tr *Tree) {
				if err := c.do(tr); err != nil {
					t.Fatal(err)
				}
				got := map[string]string{}
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					rel, _ := filepath.Rel(dir, p)
					switch {
					case rel == ".":
					case d.IsDir():
						got[filepath.ToSlash(rel)] = "/"
					default:
						data, _ := os.ReadFile(p)
						got[filepath.ToSlash(rel)] = string(data)
					}
					return nil
				})
				if len(got) != len(c.want) {
					t.Fatalf("tree holds %v, want %v", got, c.want)
				}
				for k, v := range c.want {
					if got[k] != v {
						t.Fatalf("tree holds %v, want %v", got, c.want)
					}
				}
			})
		})
	}
}

// TestTreeRenameNoReplace runs the cases every rename-without-replace
// passes (renameCases) below a Tree, the system's call and the fallback
// that claims the name first alike.
func TestTreeRenameNoReplace(t *testing.T) {
	for _, byLink := range []bool{false, true} {
		renameCases(t, func(from, to string) error {
			tr, err := OpenTree(filepath.Dir(from))
			if err != nil {
				return err
			}
			defer tr.Close()
			rel, err := filepath.Rel(tr.Path(), to)
			if err != nil {
				return err
			}
			if byLink {
				return renameNoReplaceByLinkIn(tr, filepath.Base(from), rel)
			}
			return tr.RenameNoReplace(filepath.Base(from), rel)
		})
	}
}

func TestTreeSync(t *testing.T) {
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		if err := tr.Mkdir("d", 0o755); err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{".", "d"} {
			if err := tr.SyncDir(rel); err != nil {
				t.Errorf("SyncDir(%q): %v", rel, err)
			}
			if err := tr.SyncFS(rel); err != nil {
				t.Errorf("SyncFS(%q): %v", rel, err)
			}
		}
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		if err := tr.Close(); err != nil {
			t.Errorf("a second Close: %v", err)
		}
	})
}

func TestTreeChtimes(t *testing.T) {
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		f, err := tr.OpenFile("f", os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := tr.Chtimes("f", when, when); err != nil {
			t.Fatal(err)
		}
		if info, err := os.Lstat(filepath.Join(dir, "f")); err != nil || !info.ModTime().Equal(when) {
			t.Errorf("mtime %v, %v; want %v", info.ModTime(), err, when)
		}
	})
}

func TestTreeRefusesPathsOutside(t *testing.T) {
	trees(t, func(t *testing.T, dir string, tr *Tree) {
		for _, rel := range []string{"", "..", filepath.Join("..", "x"), filepath.Join(dir, "x")} {
			if _, err := tr.OpenFile(rel, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
				t.Errorf("OpenFile(%q) opened a file", rel)
			}
		}
	})
}

// TestTreeLinks plants links where a Tree writes: in its own place after
// it was opened (its parent swapped for a link to another folder), and
// on the way below it. Nothing is written outside, and a link below is
// refused with ErrLinkOnPath or ErrLink.
func TestTreeLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows resolves a Tree by path (docs/platforms.md)")
	}
	outside := func(t *testing.T) string {
		o := t.TempDir()
		if err := os.Mkdir(filepath.Join(o, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		return o
	}
	empty := func(t *testing.T, o string) {
		t.Helper()
		entries, _ := os.ReadDir(filepath.Join(o, "sub"))
		if len(entries) > 0 {
			t.Fatalf("%d entries landed outside the tree", len(entries))
		}
	}
	t.Run("parent swapped after open", func(t *testing.T) {
		for _, walk := range []bool{false, true} {
			base := t.TempDir()
			o := outside(t)
			tr, err := MkdirTree(base, []string{"agent", "sub"}, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if walk {
				forceWalk(tr)
			}
			// Another process moves the agent's folder away and plants a
			// link to o in its place.
			if err := os.Rename(filepath.Join(base, "agent"), filepath.Join(base, "moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(o, filepath.Join(base, "agent")); err != nil {
				t.Fatal(err)
			}
			if err := tr.Mkdir("d", 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := tr.OpenFile(filepath.Join("d", "f"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := tr.Rename("d", "e"); err != nil {
				t.Fatal(err)
			}
			tr.Close()
			empty(t, o)
			if _, err := os.Lstat(filepath.Join(base, "moved", "sub", "e", "f")); err != nil {
				t.Errorf("the file is not in the folder the tree held: %v", err)
			}
		}
	})
	t.Run("link below", func(t *testing.T) {
		trees(t, func(t *testing.T, dir string, tr *Tree) {
			o := outside(t)
			if err := os.Symlink(filepath.Join(o, "sub"), filepath.Join(dir, "d")); err != nil {
				t.Fatal(err)
			}
			ops := map[string]func() error{
				"open": func() error {
					_, err := tr.OpenFile(filepath.Join("d", "f"), os.O_WRONLY|os.O_CREATE, 0o644)
					return err
				},
				"mkdir":   func() error { return tr.Mkdir(filepath.Join("d", "x"), 0o755) },
				"symlink": func() error { return tr.Symlink("y", filepath.Join("d", "y")) },
				"rename": func() error {
					f, _ := tr.OpenFile("g", os.O_WRONLY|os.O_CREATE, 0o644)
					f.Close()
					return tr.Rename("g", filepath.Join("d", "g"))
				},
			}
			for name, op := range ops {
				if err := op(); !errors.Is(err, ErrLinkOnPath) {
					t.Errorf("%s through a link = %v, want ErrLinkOnPath", name, err)
				}
			}
			empty(t, o)
			// The link itself, at the last component: refused by open,
			// removed itself (never its target's content) by RemoveAll.
			if _, err := tr.OpenFile("d", os.O_RDONLY, 0); !errors.Is(err, ErrLink) {
				t.Errorf("open of the link = %v, want ErrLink", err)
			}
			os.WriteFile(filepath.Join(o, "sub", "keep"), []byte("k"), 0o644)
			if err := tr.RemoveAll("d"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(o, "sub", "keep")); err != nil {
				t.Errorf("RemoveAll of a link removed what it points to: %v", err)
			}
		})
	})
}
