package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobody is the user a test runs skillsync as when it runs as root, for
// whom file permissions do not hold.
const nobody = 65534

// unreadableWorkspace is a workspace with a dir: source "team" (src/),
// run by skillsync as nobody when the test runs as root.
type unreadableWorkspace struct {
	t      *testing.T
	dir    string
	bin    string
	asRoot bool
}

func newUnreadableWorkspace(t *testing.T, files map[string]string) *unreadableWorkspace {
	t.Helper()
	w := &unreadableWorkspace{t: t, asRoot: os.Geteuid() == 0}
	var err error
	if w.dir, err = os.MkdirTemp("", "skillsync-unreadable-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever a case made unreadable is readable again, to be removed.
		_ = filepath.Walk(w.dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode()&os.ModeSymlink == 0 {
				_ = os.Chmod(path, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(w.dir)
	})
	if _, ok := files["skillsync.yaml"]; !ok {
		files["skillsync.yaml"] = "repositories:\n  - name: team\n    dir: src\ntargets:\n  - dir: out\n"
	}
	writeTree(t, w.dir, files)
	w.bin = binary(t)
	if w.asRoot {
		// nobody must reach the workspace and run the binary.
		data, err := os.ReadFile(w.bin)
		if err != nil {
			t.Fatal(err)
		}
		w.bin = filepath.Join(w.dir, "skillsync")
		if err := os.WriteFile(w.bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		// A process another test forks meanwhile may hold the file open for
		// writing until it execs: exec fails with ETXTBSY until then.
		for try := 0; ; try++ {
			err := exec.Command(w.bin, "version").Run()
			if !errors.Is(err, syscall.ETXTBSY) || try == 100 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := os.Chmod(w.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		w.own()
	}
	return w
}

// own gives everything in the workspace to nobody, when run as root.
func (w *unreadableWorkspace) own() {
	if !w.asRoot {
		return
	}
	if err := filepath.Walk(w.dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, nobody, nobody)
	}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *unreadableWorkspace) sync() result {
	w.t.Helper()
	cmd := exec.Command(w.bin, "sync")
	cmd.Dir = w.dir
	cmd.Env = []string{"HOME=" + filepath.Join(w.dir, "home"), "XDG_CACHE_HOME=" + filepath.Join(w.dir, ".xdg"),
		"XDG_CONFIG_HOME=" + filepath.Join(w.dir, ".config"), "PATH=" + os.Getenv("PATH")}
	if w.asRoot {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	return runCmd(w.t, cmd)
}

func (w *unreadableWorkspace) chmod(rel string, mode os.FileMode) {
	w.t.Helper()
	if err := os.Chmod(filepath.Join(w.dir, rel), mode); err != nil {
		w.t.Fatal(err)
	}
}

// copies returns, for each file of the cache's and the target's copy of
// the skill name, its content.
func (w *unreadableWorkspace) copies(name string) map[string]string {
	out := map[string]string{}
	for _, root := range []string{filepath.Join(".skills-cache", "team", name), filepath.Join("out", name)} {
		_ = filepath.Walk(filepath.Join(w.dir, root), func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				data, _ := os.ReadFile(path)
				rel, _ := filepath.Rel(w.dir, path)
				out[rel] = string(data)
			}
			return nil
		})
	}
	return out
}

func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\nBody.\n"
}

// TestSyncKeepsSkillsItCannotRead: a skill of a source that a sync cannot
// read whole, or cannot tell is still there (a folder, a SKILL.md or a
// linked file it may not read, a link to a folder it may not search),
// keeps its cached and placed copies, file for file, and the source is
// partly synced (exit 3) on every sync, rather than the skill being
// removed or copied without a file as if the source had changed. Readable
// again, the source syncs whole. Run as root, skillsync runs as nobody.
func TestSyncKeepsSkillsItCannotRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		link  [2]string // a symbolic link: where, and what it holds
		skill string    // the skill that must keep its copies
		chmod string    // what is made unreadable
		touch string    // a file added then, so that the skill is read again
	}{
		{name: "folder", skill: "x", chmod: "src/skills/group",
			files: map[string]string{"src/skills/group/x/SKILL.md": skillMD("x"), "src/skills/group/y/SKILL.md": skillMD("y"), "src/skills/z/SKILL.md": skillMD("z")}},
		{name: "duplicate", skill: "x", chmod: "src/skills/group",
			files: map[string]string{"src/skills/group/x/SKILL.md": skillMD("x"), "src/skills/other/x/SKILL.md": skillMD("x") + "The other copy.\n", "src/skills/z/SKILL.md": skillMD("z")}},
		{name: "plugin manifest", skill: "x", chmod: "src/.claude-plugin/marketplace.json",
			files: map[string]string{"src/.claude-plugin/marketplace.json": `{"name": "acme", "plugins": [{"name": "docs", "source": "./plugins/docs"}]}`,
				"src/plugins/docs/skills/x/SKILL.md": skillMD("x"), "src/plugins/docs/skills/z/SKILL.md": skillMD("z"),
				"skillsync.yaml": "repositories:\n  - name: team\n    dir: src\n    plugins: [docs]\ntargets:\n  - dir: out\n"}},
		{name: "SKILL.md", skill: "x", chmod: "src/skills/x/SKILL.md", touch: "src/skills/x/new.txt",
			files: map[string]string{"src/skills/x/SKILL.md": skillMD("x"), "src/skills/z/SKILL.md": skillMD("z")}},
		{name: "linked folder", skill: "x", chmod: "src/private", link: [2]string{"src/skills/linked", "../private/real"},
			files: map[string]string{"src/private/real/x/SKILL.md": skillMD("x"), "src/skills/z/SKILL.md": skillMD("z")}},
		{name: "dot folder", skill: "x", chmod: "src/.claude",
			files: map[string]string{"src/.claude/skills/x/SKILL.md": skillMD("x"), "src/skills/z/SKILL.md": skillMD("z")}},
		{name: "linked file", skill: "x", chmod: "src/shared", touch: "src/skills/x/new.txt", link: [2]string{"src/skills/x/ref.md", "../../shared/ref.md"},
			files: map[string]string{"src/skills/x/SKILL.md": skillMD("x"), "src/shared/ref.md": "the reference\n", "src/skills/z/SKILL.md": skillMD("z")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newUnreadableWorkspace(t, tc.files)
			if tc.link[0] != "" {
				if err := os.Symlink(tc.link[1], filepath.Join(w.dir, tc.link[0])); err != nil {
					t.Fatal(err)
				}
				w.own()
			}
			r := w.sync()
			before := w.copies(tc.skill)
			if r.code != 0 || len(before) < 2 || len(w.copies("z")) < 2 {
				t.Fatalf("first sync: %d, copies %v\n%s%s", r.code, before, r.stdout, r.stderr)
			}
			w.chmod(tc.chmod, 0)
			// z changes too, so the source is read again whatever its
			// revision makes of a change of permissions.
			writeTree(t, w.dir, map[string]string{"src/skills/z/SKILL.md": skillMD("z") + "More.\n"})
			if tc.touch != "" {
				writeTree(t, w.dir, map[string]string{tc.touch: "new\n"})
				w.own()
			}
			for _, when := range []string{"unreadable", "again"} {
				r := w.sync()
				if r.code != 3 || !strings.Contains(r.stdout, "partial") || !strings.Contains(r.stderr, "source team: kept the last synced copies of "+tc.skill) {
					t.Errorf("%s: exit %d, want 3 and partial\n%s%s", when, r.code, r.stdout, r.stderr)
				}
				if got := w.copies(tc.skill); len(got) != len(before) {
					t.Errorf("%s: copies of %s %v, want %v", when, tc.skill, got, before)
				} else {
					for path, data := range before {
						if got[path] != data {
							t.Errorf("%s: %s holds %q, want %q", when, path, got[path], data)
						}
					}
				}
			}
			w.chmod(tc.chmod, 0o755)
			if r := w.sync(); r.code != 0 || len(w.copies(tc.skill)) < len(before) {
				t.Errorf("readable again: %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestSyncWarnsOfAFolderItCannotReadThatHoldsNoSkill: an unreadable
// folder of a source that holds no cached skill is a warning, exit 0.
func TestSyncWarnsOfAFolderItCannotReadThatHoldsNoSkill(t *testing.T) {
	t.Parallel()
	// No skills/ folder: discovery walks the whole source.
	w := newUnreadableWorkspace(t, map[string]string{"src/top/z/SKILL.md": skillMD("z")})
	if r := w.sync(); r.code != 0 {
		t.Fatalf("first sync: %d %s", r.code, r.stderr)
	}
	writeTree(t, w.dir, map[string]string{"src/private/notes.txt": "mine\n"})
	w.own()
	w.chmod("src/private", 0)
	if r := w.sync(); r.code != 0 || !strings.Contains(r.stderr, "dir-unreadable") || len(w.copies("z")) != 2 {
		t.Errorf("an unreadable folder of no cached skill: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestSyncDropsAHeldSkillTheSelectionLeavesOut: a skill kept because its
// folder cannot be read goes once the source's selection leaves it out
// (exclude:), as it would were the folder readable; its neighbour stays.
func TestSyncDropsAHeldSkillTheSelectionLeavesOut(t *testing.T) {
	t.Parallel()
	w := newUnreadableWorkspace(t, map[string]string{"src/skills/group/x/SKILL.md": skillMD("x"), "src/skills/group/y/SKILL.md": skillMD("y"),
		"src/skills/z/SKILL.md": skillMD("z")})
	if r := w.sync(); r.code != 0 {
		t.Fatalf("first sync: %d %s", r.code, r.stderr)
	}
	w.chmod("src/skills/group", 0)
	writeTree(t, w.dir, map[string]string{"skillsync.yaml": "repositories:\n  - name: team\n    dir: src\n    exclude: [x]\ntargets:\n  - dir: out\n"})
	w.own()
	r := w.sync()
	if r.code != 3 || len(w.copies("x")) != 0 || len(w.copies("y")) != 2 {
		t.Errorf("x left out while its folder is unreadable: %d, x %v, y %v\n%s%s", r.code, w.copies("x"), w.copies("y"), r.stdout, r.stderr)
	}
}
