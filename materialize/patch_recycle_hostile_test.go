//go:build linux

package materialize

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// roundVersion is round r of skill i: consecutive rounds (and any two
// rounds) differ by one file per skill, so every sync patches every
// skill: an edit of ref/notes.md (exchange), or ref/extra.md removed
// (moved to staging) or added.
func roundVersion(i, r int) map[string]string {
	files := map[string]string{
		"SKILL.md":     fmt.Sprintf("---\nname: s%03d\ndescription: d\n---\n", i),
		"ref/keep.md":  fmt.Sprintf("keep %d\n", i),
		"ref/notes.md": fmt.Sprintf("notes of %d\n", i),
	}
	if i%4 == 0 {
		if r%2 == 0 {
			files["ref/extra.md"] = strings.Repeat(fmt.Sprintf("extra %d\n", i), 1+i%7)
		}
		return files
	}
	files["ref/extra.md"] = "extra\n"
	files["ref/notes.md"] = strings.Repeat(fmt.Sprintf("notes of %d round %d\n", i, r), 1+(i+r)%9)
	return files
}

const roundSkillCount = 48

func roundSkills(r int) []Skill {
	var out []Skill
	for i := 0; i < roundSkillCount; i++ {
		out = append(out, mkSkill(fmt.Sprintf("s%03d", i), roundVersion(i, r)))
	}
	return out
}

func roundSync(root string, r int, settle time.Duration) error {
	c, err := openCache(context.Background(), root, 10*time.Second, CheckRecord, settle, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "r" + strconv.Itoa(r), Skills: roundSkills(r)})
	if len(res.Errors) > 0 {
		return fmt.Errorf("%v", res.Errors)
	}
	return c.Commit(context.Background())
}

// liveInodes maps every live file of the cache's source to its inode and
// fails when two live paths share one.
func liveInodes(t *testing.T, root string) map[uint64]string {
	t.Helper()
	out := map[uint64]string{}
	err := filepath.Walk(filepath.Join(root, "src"), func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		_, ino, _ := platform.FileKey(info)
		if other, ok := out[ino]; ok {
			t.Errorf("live %s and %s share inode %d", p, other, ino)
		}
		out[ino] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRound checks every skill is round r, the cache verifies, no
// kept file is live, and returns the kept files' inodes.
func checkRound(t *testing.T, root string, r int) map[uint64]bool {
	t.Helper()
	for i := 0; i < roundSkillCount; i++ {
		got, _ := tree(t, filepath.Join(root, "src", fmt.Sprintf("s%03d", i)))
		if want := roundVersion(i, r); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: s%03d holds %v, want %v", r, i, got, want)
		}
	}
	if diffs := verifyCache(t, root); len(diffs) > 0 {
		t.Fatalf("round %d: verify: %v", r, diffs)
	}
	live := liveInodes(t, root)
	keptIno := map[uint64]bool{}
	for ino := range kept(t, root) {
		if p, ok := live[ino]; ok {
			t.Errorf("round %d: kept file inode %d is live as %s", r, ino, p)
		}
		keptIno[ino] = true
	}
	return keptIno
}

// Many skills patched at once, their stagers taking kept files side by
// side (run with -race): each live file is the round's, no two live
// paths share an inode, no kept file is live, and kept files are in fact
// written into.
func TestManyPatchesRecycleConcurrently(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := roundSync(root, 0, 0); err != nil {
		t.Fatal(err)
	}
	prevKept := checkRound(t, root, 0)
	reused := 0
	for r := 1; r <= 8; r++ {
		if err := roundSync(root, r, 0); err != nil {
			t.Fatal(err)
		}
		keptNow := checkRound(t, root, r)
		for ino := range liveInodes(t, root) {
			if prevKept[ino] {
				reused++
			}
		}
		prevKept = keptNow
	}
	if reused == 0 {
		t.Errorf("no kept file was written into")
	}
	t.Logf("%d live files written into kept inodes", reused)
}

// Hostile entries planted in staging as *.patch before a sync that
// patches every skill: nothing outside is written, truncated or removed,
// the sync does not hang, and the cache is right afterwards.
func TestHostileKeptFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := roundSync(root, 0, 0); err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(root, stagingName)
	outside := t.TempDir()
	outFile := filepath.Join(outside, "secret")
	outLinked := filepath.Join(outside, "linked")
	outDir := filepath.Join(outside, "dir")
	for p, c := range map[string]string{outFile: "SECRET", outLinked: "LINKED", filepath.Join(outDir, "inner"): "INNER"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outFile, filepath.Join(staging, "l1"+patchSuffix)))
	must(os.Symlink(outDir, filepath.Join(staging, "l2"+patchSuffix)))
	must(os.Symlink(outside, filepath.Join(staging, "l3"+patchSuffix)))
	must(platform.Mkfifo(filepath.Join(staging, "f1"+patchSuffix)))
	must(os.Link(outLinked, filepath.Join(staging, "h1"+patchSuffix)))
	must(os.Mkdir(filepath.Join(staging, "d1"+patchSuffix), 0o755))
	must(os.Symlink(outFile, filepath.Join(staging, "d1"+patchSuffix, "notes.md")))
	must(os.Link(outLinked, filepath.Join(staging, "d1"+patchSuffix, "hard.md")))

	done := make(chan error, 1)
	go func() { done <- roundSync(root, 1, 0) }()
	select {
	case err := <-done:
		must(err)
	case <-time.After(60 * time.Second):
		t.Fatal("the sync hangs")
	}
	checkRound(t, root, 1)
	for p, c := range map[string]string{outFile: "SECRET", outLinked: "LINKED", filepath.Join(outDir, "inner"): "INNER"} {
		if data, err := os.ReadFile(p); err != nil || string(data) != c {
			t.Errorf("outside %s holds %q %v, want %q", p, data, err, c)
		}
	}
	// A second sync, the planted folder now settled in the pool too.
	must(roundSync(root, 2, 0))
	checkRound(t, root, 2)
	for p, c := range map[string]string{outFile: "SECRET", outLinked: "LINKED", filepath.Join(outDir, "inner"): "INNER"} {
		if data, err := os.ReadFile(p); err != nil || string(data) != c {
			t.Errorf("outside %s holds %q %v, want %q", p, data, err, c)
		}
	}
}

// A FIFO where a kept file was, found by reusable (lstat) or swapped in
// after the lstat (the open): neither waits for a reader.
func TestAFIFOKeptFileDoesNotBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x"+patchSuffix)
	if err := platform.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := platform.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Logf("open O_WRONLY of a FIFO with no reader: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("platform.OpenFile(fifo, O_WRONLY) blocks")
	}
	w := &writer{staging: dir}
	if info := w.fitFile(fifo); info != nil {
		t.Fatal("a FIFO was handed out")
	}
	if _, err := os.Lstat(fifo); !os.IsNotExist(err) {
		t.Errorf("the FIFO is still there: %v", err)
	}
}

// A kept file owned by another user (planted in staging; the sync runs as
// root, as a system-wide daemon would) is never written into to go live:
// that user could rewrite it behind the record.
func TestAKeptFileOfAnotherUserNeverGoesLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to plant a file owned by another user")
	}
	t.Parallel()
	root := t.TempDir()
	if err := roundSync(root, 0, 0); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	planted := filepath.Join(root, stagingName, "planted"+patchSuffix)
	if err := os.WriteFile(planted, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(planted, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	plantedIno := stat(t, planted).ino
	if err := roundSync(root, 1, 0); err != nil {
		t.Fatal(err)
	}
	checkRound(t, root, 1)
	if p, ok := liveInodes(t, root)[plantedIno]; ok {
		info, _ := os.Lstat(p)
		st := info.Sys().(*syscall.Stat_t)
		t.Errorf("the planted file (uid %d) is live as %s, owned by uid %d, mode %v", nobody, p, st.Uid, info.Mode())
	}
}

const reuseCrashEnv = "SKILLSYNC_REUSE_CRASH_CHILD"

// Syncs that write into kept files (settle 0, so every kept file is
// fit), killed with SIGKILL at random moments: every live skill is
// always one whole round, and the next sync puts everything right.
func TestPatchReuseSurvivesSIGKILL(t *testing.T) {
	if root := os.Getenv(reuseCrashEnv); root != "" {
		// The child: syncs back to back, rounds in random order, until
		// killed.
		for {
			r := rand.IntN(6)
			if err := roundSync(root, r, 0); err != nil {
				fmt.Fprintln(os.Stderr, "child sync:", err)
			}
		}
	}
	if testing.Short() {
		t.Skip("kills syncs")
	}
	t.Parallel()
	root := t.TempDir()
	if err := roundSync(root, 0, 0); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rounds := map[int][]map[string]string{}
	for i := 0; i < roundSkillCount; i++ {
		for r := 0; r < 6; r++ {
			rounds[i] = append(rounds[i], roundVersion(i, r))
		}
	}
	const kills = 60
	for k := 0; k < kills; k++ {
		cmd := exec.Command(exe, "-test.run=^TestPatchReuseSurvivesSIGKILL$", "-test.count=1")
		cmd.Env = append(os.Environ(), reuseCrashEnv+"="+root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+rand.IntN(400)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		for i := 0; i < roundSkillCount; i++ {
			got, _ := tree(t, filepath.Join(root, "src", fmt.Sprintf("s%03d", i)))
			whole := false
			for _, want := range rounds[i] {
				if reflect.DeepEqual(got, want) {
					whole = true
				}
			}
			if !whole {
				t.Fatalf("kill %d: s%03d is no round: %v", k, i, got)
			}
		}
		live := liveInodes(t, root)
		for ino := range kept(t, root) {
			if p, ok := live[ino]; ok {
				t.Fatalf("kill %d: kept inode %d is live as %s", k, ino, p)
			}
		}
	}
	for r := 3; r < 6; r++ {
		if err := roundSync(root, r, 0); err != nil {
			t.Fatal(err)
		}
		checkRound(t, root, r)
	}
}

// Nor is a folder owned by another user planted in staging recycled as a
// whole build's folder.
func TestAStagingFolderOfAnotherUserNeverGoesLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to plant a folder owned by another user")
	}
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("a", v1))
	const nobody = 65534
	planted := filepath.Join(root, stagingName, "planted")
	if err := os.Mkdir(planted, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(planted, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	plantedIno := stat(t, planted).ino
	v2 := map[string]string{"SKILL.md": "---\nname: a\ndescription: e\n---\n", "scripts/run.sh": "#!/bin/sh\necho 2\n", "ref/notes.md": "notes v2"}
	syncSettled(t, root, "r2", 0, mkSkill("a", v2))
	live := filepath.Join(root, "src", "a")
	if stat(t, live).ino == plantedIno {
		info, _ := os.Lstat(live)
		t.Errorf("the planted folder (uid %d) is the live skill, owned by uid %d", nobody, info.Sys().(*syscall.Stat_t).Uid)
	}
}

// docs/sync.md: "Anything else there that is not a folder is removed."
// A link or a FIFO named *.patch is removed by the next sync that builds
// or patches, whether or not a patch comes to it; a sync with nothing
// new does not read staging.
func TestStagingRemovesPatchEntriesThatAreNotFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := roundSync(root, 0, 0); err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(root, stagingName)
	if err := os.Symlink("/etc/passwd", filepath.Join(staging, "l"+patchSuffix)); err != nil {
		t.Fatal(err)
	}
	if err := platform.Mkfifo(filepath.Join(staging, "f"+patchSuffix)); err != nil {
		t.Fatal(err)
	}
	junk := []string{"l" + patchSuffix, "f" + patchSuffix}
	if err := roundSync(root, 0, 0); err != nil { // nothing new
		t.Fatal(err)
	}
	for _, n := range junk {
		if _, err := os.Lstat(filepath.Join(staging, n)); err != nil {
			t.Errorf("a sync with nothing new read staging: %s is gone (%v)", n, err)
		}
	}
	if err := roundSync(root, 1, 0); err != nil { // skills changed
		t.Fatal(err)
	}
	for _, n := range junk {
		if _, err := os.Lstat(filepath.Join(staging, n)); err == nil {
			t.Errorf("staging still holds %s, which is not a folder, after a sync that wrote", n)
		}
	}
}
