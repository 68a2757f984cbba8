package gittest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"hash/adler32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// repeatedCases are contents at the edges of Zlib's literals and copies:
// zeros, a unit with a head, a unit of 30 bytes (a distance with extra
// bits), one of deflate's largest distance.
func repeatedCases() []Repeated {
	var cases []Repeated
	for _, n := range []int64{1, 257, 258, 259, 516, 1000, 100_000} {
		cases = append(cases, Repeated{Unit: "\x00", Size: n})
	}
	for _, n := range []int64{5, 35, 300, 1000, 100_003} {
		cases = append(cases, Repeated{Head: "tree 1\n\n", Unit: "a commit message that goes on ", Size: n + 8})
	}
	cases = append(cases,
		Repeated{Head: "h", Size: 1},
		Repeated{Head: "x", Unit: "\xff\xfe\xfd", Size: 300_001}, // over 65521 units: every sum wraps
		Repeated{Unit: "\xff", Size: 65521*2 + 7},
		Repeated{Unit: strings.Repeat("\xffx", 16<<10), Size: 200_000},
		Repeated{Unit: "ab\x90", Size: 7},
	)
	return cases
}

// TestRepeated: the content reads as Head then Unit over and over, in
// reads of any size; its zlib stream inflates to it.
func TestRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range repeatedCases() {
		w := c.Head
		if c.Unit != "" {
			w += strings.Repeat(c.Unit, int(c.Size)/len(c.Unit)+1)
		}
		w = w[:c.Size]
		for _, size := range []int{1, 7, 4096} {
			if size < 4096 && c.Size > 100_100 {
				continue // a few bytes at a time: seconds under the race detector
			}
			var got bytes.Buffer
			buf := make([]byte, size)
			if _, err := io.CopyBuffer(struct{ io.Writer }{&got}, struct{ io.Reader }{c.Reader()}, buf); err != nil || got.String() != w {
				t.Errorf("%q+%q, %d bytes, read %d at a time: %d bytes differ, %v", c.Head, c.Unit[:min(len(c.Unit), 8)], c.Size, size, got.Len(), err)
			}
		}
		sum := adler32.Checksum([]byte(w))
		if got := c.adler32(); got != sum {
			t.Errorf("%q+%q, %d bytes: Adler-32 %#x, want %#x", c.Head, c.Unit[:min(len(c.Unit), 8)], c.Size, got, sum)
		}
		zr, err := zlib.NewReader(bytes.NewReader(c.Zlib()))
		if err != nil {
			t.Fatalf("%d bytes: %v", c.Size, err)
		}
		data, err := io.ReadAll(zr)
		if err != nil || string(data) != w {
			t.Errorf("%q+%q, %d bytes: the zlib stream inflates to %d bytes that differ, %v", c.Head, c.Unit[:min(len(c.Unit), 8)], c.Size, len(data), err)
		}
	}
}

// TestPackObject: git reads each object PackObject stores, under the hash
// git hash-object gives its content, and git fsck finds the packs and
// their indexes sound.
func TestPackObject(t *testing.T) {
	t.Parallel()
	r := NewRepo(t, "main")
	var hashes []string
	var contents []string
	for _, c := range repeatedCases() {
		data, err := io.ReadAll(c.Reader())
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, r.PackObject("blob", c))
		contents = append(contents, string(data))
	}
	// A commit: fsck checks its form too.
	tree := r.MkTree("100644 blob " + hashes[0] + "\tzero")
	commit := r.PackObject("commit", Repeated{
		Head: "tree " + tree + "\nauthor A <a@example.com> 1767323045 +0000\ncommitter A <a@example.com> 1767323045 +0000\n\n",
		Unit: "a message that goes on ", Size: 20_000,
	})
	r.Git("update-ref", "refs/heads/main", commit)
	if got := r.Git("rev-parse", "HEAD^{tree}"); got != tree {
		t.Errorf("the packed commit's tree is %s, want %s", got, tree)
	}
	r.Git("fsck", "--full", "--strict", "--no-dangling")
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = r.Dir
	cmd.Stdin = strings.NewReader(strings.Join(hashes, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	for i, h := range hashes {
		header := fmt.Sprintf("%s blob %d\n", h, len(contents[i]))
		if !bytes.HasPrefix(out, []byte(header+contents[i]+"\n")) {
			t.Fatalf("git reads object %d, %s, otherwise: %.80q", i, h, out)
		}
		out = out[len(header)+len(contents[i])+1:]
	}
	// The hashes, as git hash-object gives them: the contents written
	// out, one process for them all.
	dir := t.TempDir()
	args := []string{"hash-object", "--no-filters", "--"}
	for i, c := range contents {
		name := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(name, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, name)
	}
	if want := strings.Join(hashes, "\n"); r.Git(args...) != want {
		t.Errorf("git hash-object gives %s, PackObject %s", r.Git(args...), want)
	}
}
