package diff

import (
	"bytes"
	"context"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/skill"
)

// lcs is the length of the longest common subsequence, the slow way.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestLineEditsAreShortestAndCorrect: on random texts the edits rebuild
// both sides, and the number of changed lines is the least possible.
func TestLineEditsAreShortestAndCorrect(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e"}
	gen := func() []string {
		out := make([]string, r.IntN(12))
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return out
	}
	for range 2000 {
		a, b := gen(), gen()
		edits := lineEdits(a, b)
		var gotA, gotB []string
		changes := 0
		for _, e := range edits {
			switch e.kind {
			case same:
				gotA, gotB = append(gotA, a[e.ai]), append(gotB, b[e.bi])
				if a[e.ai] != b[e.bi] {
					t.Fatalf("%q -> %q: a kept line differs", a, b)
				}
			case del:
				gotA = append(gotA, a[e.ai])
				changes++
			case ins:
				gotB = append(gotB, b[e.bi])
				changes++
			}
		}
		if strings.Join(gotA, "") != strings.Join(a, "") || strings.Join(gotB, "") != strings.Join(b, "") {
			t.Fatalf("%q -> %q: edits rebuild %q -> %q", a, b, gotA, gotB)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); changes != want {
			t.Fatalf("%q -> %q: %d changes, want %d", a, b, changes, want)
		}
	}
}

// TestLineEditsGiveUpBounded: two texts with nothing in common cost a
// whole replacement, not a quadratic search.
func TestLineEditsGiveUpBounded(t *testing.T) {
	t.Parallel()
	var a, b []string
	for i := range 3000 {
		a = append(a, "a"+strings.Repeat("x", i%7)+"\n")
		b = append(b, "b"+strings.Repeat("y", i%5)+"\n")
	}
	edits := lineEdits(a, b)
	if len(edits) != 6000 {
		t.Errorf("%d edits, want 6000", len(edits))
	}
}

func mapFiles(files map[string]string) Files {
	fsys := fstest.MapFS{}
	for p, data := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		fsys[p] = &fstest.MapFile{Data: []byte(data), Mode: mode}
	}
	// Listed as a draft's walk lists them, names the catalog would refuse
	// included: a draft's diff shows what the draft holds.
	var list []skill.File
	for _, p := range slices.Sorted(maps.Keys(files)) {
		list = append(list, skill.File{Path: p, Mode: fsys[p].Mode, Size: int64(len(files[p]))})
	}
	return Files{FS: fsys, List: list}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	old := mapFiles(map[string]string{"SKILL.md": "one\n", "gone.md": "x", "same.md": "s", "run": "#!"})
	new := mapFiles(map[string]string{"SKILL.md": "two\n", "new.md": "y", "same.md": "s", "run.sh": "#!"})
	d, err := Compare(context.Background(), old, new)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Added, ",") != "new.md,run.sh" || strings.Join(d.Changed, ",") != "SKILL.md" || strings.Join(d.Removed, ",") != "gone.md,run" {
		t.Errorf("summary = %+v", d)
	}
}

// TestWriteApplies: the diff git apply reads turns the old files into
// the new ones, line endings, missing final newlines and modes included.
func TestWriteApplies(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	var long []string
	for i := range 40 {
		long = append(long, "line "+string(rune('a'+i%26))+"\n")
	}
	changed := append([]string{}, long...)
	changed[3], changed[30] = "third changed\n", "thirtieth changed\n"
	old := map[string]string{
		"SKILL.md":    "---\nname: pdf\n---\n# PDF\nRead PDFs.\n",
		"long.md":     strings.Join(long, ""),
		"gone.md":     "bye\n",
		"no-eol.md":   "a\nb",
		"script.sh":   "#!/bin/sh\necho 1\n",
		"bin.dat":     "\x00\x01",
		"unchanged.m": "same\n",
	}
	new := map[string]string{
		"SKILL.md":    "---\nname: pdf\n---\n# PDF\nRead and fill PDFs.\nMore.\n",
		"long.md":     strings.Join(changed, ""),
		"added.md":    "hello\n",
		"no-eol.md":   "a\nc",
		"script.sh":   "#!/bin/sh\necho 1\n",
		"bin.dat":     "\x00\x02",
		"unchanged.m": "same\n",
		"empty.md":    "",
		// A name that would act on a terminal is quoted, as git quotes
		// it, and git apply still reads it.
		"red\x1b[31m.md": "red\n",
	}
	oldFiles, newFiles := mapFiles(old), mapFiles(new)
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, oldFiles, newFiles); err != nil {
		t.Fatal(err)
	}
	diff := buf.String()
	if !strings.Contains(diff, "Binary files a/bin.dat and b/bin.dat differ") || strings.Contains(diff, "unchanged.m") {
		t.Errorf("diff:\n%s", diff)
	}
	if strings.Contains(diff, "\x1b") || !strings.Contains(diff, `diff --git "a/red\033[31m.md" "b/red\033[31m.md"`) {
		t.Errorf("a name with a control character is not quoted:\n%q", diff)
	}
	if strings.Count(diff, "@@ -") != 7 {
		t.Errorf("want two hunks in long.md and one in each other text file, the new ones included:\n%s", diff)
	}
	// git apply cannot apply a binary diff without its data: apply the
	// rest and compare the text files.
	dir := t.TempDir()
	for p, data := range old {
		if p != "bin.dat" {
			if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	patch := filepath.Join(t.TempDir(), "patch")
	if err := os.WriteFile(patch, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", "--exclude=bin.dat", patch)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\n%s", err, out, diff)
	}
	for p, want := range new {
		if p == "bin.dat" {
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(got) != want {
			t.Errorf("%s after apply = %q, %v; want %q", p, got, err, want)
		}
	}
	if skilltest.Exists(filepath.Join(dir, "gone.md")) {
		t.Error("gone.md is still there after apply")
	}
}
