package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the user a test runs skillsync as when it runs as root, for
// whom file permissions do not hold.
const nobody = 65534

// TestSyncKeepsSkillsInAFolderItCannotRead: a folder of a source that
// cannot be read (its permissions) is a warning while it holds nothing
// the cache has; once it holds cached skills, they keep their cached and
// placed copies, and the source is partly synced (exit 3), rather than
// the skills being removed as if the source had dropped them. Readable
// again, the source syncs whole. Run as root, skillsync runs as nobody.
func TestSyncKeepsSkillsInAFolderItCannotRead(t *testing.T) {
	t.Parallel()
	asRoot := os.Geteuid() == 0
	ws, err := os.MkdirTemp("", "skillsync-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.Chmod(filepath.Join(ws, "team", "group"), 0o755)
		_ = os.RemoveAll(ws)
	})
	writeTree(t, ws, map[string]string{
		"team/group/x/SKILL.md": "---\nname: x\ndescription: The x skill.\n---\nBody.\n",
		"team/group/y/SKILL.md": "---\nname: y\ndescription: The y skill.\n---\nBody.\n",
		"team/top/z/SKILL.md":   "---\nname: z\ndescription: The z skill.\n---\nBody.\n",
		"skillsync.yaml":        "repositories:\n  - name: team\n    dir: team\ntargets:\n  - dir: out\n",
	})
	bin := binary(t)
	if asRoot {
		// nobody must reach the workspace and run the binary.
		copied := filepath.Join(ws, "skillsync")
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copied, data, 0o755); err != nil {
			t.Fatal(err)
		}
		bin = copied
		if err := filepath.Walk(ws, func(path string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(path, nobody, nobody)
		}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(ws, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sync := func() result {
		t.Helper()
		cmd := exec.Command(bin, "sync")
		cmd.Dir = ws
		cmd.Env = []string{"HOME=" + filepath.Join(ws, "home"), "XDG_CACHE_HOME=" + filepath.Join(ws, ".xdg"), "XDG_CONFIG_HOME=" + filepath.Join(ws, ".config"), "PATH=" + os.Getenv("PATH")}
		if asRoot {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, io.LimitReader(nil, 0)
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{out.String(), errb.String(), code}
	}
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(ws, "out", name, "SKILL.md"))
		_, cerr := os.Stat(filepath.Join(ws, ".skills-cache", "team", name, "SKILL.md"))
		return err == nil && cerr == nil
	}
	group := filepath.Join(ws, "team", "group")

	if r := sync(); r.code != 0 || !has("x") || !has("y") || !has("z") {
		t.Fatalf("first sync: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.Chmod(group, 0); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"folder unreadable", "again"} {
		r := sync()
		if r.code != 3 || !strings.Contains(r.stderr, "dir-unreadable") || strings.Contains(r.stdout, "removed") && !strings.Contains(r.stdout, "0 removed") {
			t.Errorf("%s: %d\n%s%s", when, r.code, r.stdout, r.stderr)
		}
		for _, name := range []string{"x", "y", "z"} {
			if !has(name) {
				t.Errorf("%s: skill %s lost", when, name)
			}
		}
	}
	if err := os.Chmod(group, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := sync(); r.code != 0 || !has("x") || !has("y") {
		t.Errorf("readable again: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A folder that holds no cached skill is a warning, and exit 0.
	writeTree(t, ws, map[string]string{"team/private/notes.txt": "mine\n"})
	private := filepath.Join(ws, "team", "private")
	if asRoot {
		for _, p := range []string{private, filepath.Join(private, "notes.txt")} {
			if err := os.Lchown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(private, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(private, 0o755) })
	if r := sync(); r.code != 0 || !strings.Contains(r.stderr, "dir-unreadable") {
		t.Errorf("an unreadable folder of no cached skill: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
