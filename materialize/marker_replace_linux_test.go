package materialize

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// markerReplaceDir, set in the environment, has
// TestMarkerReplaceHelper sync the target there (a2): it runs in a child
// process under strace.
const markerReplaceDir = "SKILLSYNC_TEST_MARKER_REPLACE_DIR"

func TestMarkerReplaceHelper(t *testing.T) {
	dir := os.Getenv(markerReplaceDir)
	if dir == "" {
		t.Skip("run by TestAMarkerReplacedIsWholeBeforeItsRename")
	}
	a2 := map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "x.md": "x2"}
	rep, err := SyncTarget(context.Background(), Target{Dir: dir, Skills: []TargetSkill{{Skill: mkSkill("a", a2)}}})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatal(rep.Errors, err)
	}
}

// A target's marker found at the start (a sync stopped halfway) lists
// what that sync was putting live (targetpending.go): the next sync
// reads it to take those copies as its own. The sync that finds it and
// writes its own marker over it must have the new content on the disk
// before the rename replaces the old one; else a crash between the two
// (XFS, ext4 with noauto_da_alloc) leaves an empty marker in place of
// the old one, and the copies the first sync put live are taken for the
// user's. Before d29f8a8 markLive fsynced the temporary file before its
// rename; swapAll's unflushed marker renames it first and flushes after
// (syncfs).
func TestAMarkerReplacedIsWholeBeforeItsRename(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("no strace")
	}
	dir := t.TempDir()
	a1 := map[string]string{"SKILL.md": "---\nname: a\ndescription: d\n---\n", "x.md": "x1"}
	if _, err := SyncTarget(context.Background(), Target{Dir: dir, Skills: []TargetSkill{{Skill: mkSkill("a", a1)}}}); err != nil {
		t.Fatal(err)
	}
	// A sync stopped halfway left its marker, listing what it put live.
	old := `{"note":"` + pendingNote + `","skills":{}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, targetDirty), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-o", trace,
		"-e", "trace=openat,openat2,fsync,fdatasync,syncfs,rename,renameat,renameat2",
		os.Args[0], "-test.run=^TestMarkerReplaceHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), markerReplaceDir+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	tmpName := regexp.MustCompile(`"(\.` + regexp.QuoteMeta(targetDirty) + `\.tmp-[0-9a-f]+)"`)
	opened := regexp.MustCompile(`= (\d+)$`)
	// The marker's temporary file: its descriptor, then the rename.
	fd, start := "", -1
	for i, l := range lines {
		m := tmpName.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		switch {
		case strings.Contains(l, "openat") && strings.Contains(l, "O_CREAT"):
			if o := opened.FindStringSubmatch(l); o != nil {
				fd, start = o[1], i
			}
		case strings.Contains(l, "rename") && start >= 0 && strings.HasSuffix(strings.TrimSpace(l), "= 0"):
			for _, between := range lines[start:i] {
				if strings.Contains(between, "syncfs(") ||
					strings.Contains(between, "fsync("+fd+")") || strings.Contains(between, "fdatasync("+fd+")") {
					return
				}
			}
			t.Fatalf("the marker's temporary file (fd %s) was renamed over the marker found without a flush of its content first:\n%s",
				fd, strings.Join(lines[start:i+1], "\n"))
		}
	}
	t.Fatalf("no rename of the marker's temporary file in the trace")
}
