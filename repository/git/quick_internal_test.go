package git

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/skillsync/skillsync/internal/gittest"
)

// The in-place index reader answers as git does: every object git packed
// is found at the offset git's own index names, commits and their trees
// are whole, annotated tags (a tag of a tag too) peel to their commit,
// and what the packs do not hold is not found.
func TestQuickObjectsAgreeWithGit(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	for i := range 40 {
		up.Skill("skills/s"+strings.Repeat("x", i), "Skill number "+strings.Repeat("y", i)+".")
	}
	first := up.Commit("one")
	up.Skill("skills/late", "Late.")
	second := up.Commit("two")
	up.Git("tag", "-a", "-m", "v1", "v1", first)
	up.Git("tag", "-a", "-m", "of v1", "v1-again", "v1")
	up.Git("gc", "-q")
	loose := up.Blob("only loose")

	q := openQuickObjects(filepath.Join(up.Dir, ".git"))
	defer q.Close()
	if len(q.packs) != 1 {
		t.Fatalf("packs = %d, want 1", len(q.packs))
	}
	idx, _ := filepath.Glob(filepath.Join(up.Dir, ".git", "objects", "pack", "*.idx"))
	verify := up.Git("verify-pack", "-v", idx[0])
	n := 0
	for _, line := range strings.Split(verify, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || len(f[0]) != 40 {
			continue
		}
		n++
		off, ok := q.packs[0].offset(plumbing.NewHash(f[0]))
		if !ok || plumbing.NewHash(f[0]).IsZero() || off != atoi(t, f[4], f) {
			t.Errorf("%s: offset %d, %v; git says %s", f[0], off, ok, line)
		}
	}
	if n < 80 {
		t.Fatalf("verify-pack listed %d objects", n)
	}
	for _, c := range []string{first, second} {
		if !q.hasCommit(plumbing.NewHash(c)) {
			t.Errorf("commit %s not found whole", c)
		}
	}
	for _, tag := range []string{"v1", "v1-again"} {
		h := plumbing.NewHash(up.Git("rev-parse", tag))
		if got, ok := q.peel(h); !ok || got.String() != first {
			t.Errorf("peel %s = %s, %v; want %s", tag, got, ok, first)
		}
	}
	if got, ok := q.peel(plumbing.NewHash(second)); !ok || got.String() != second {
		t.Errorf("peel of a commit = %s, %v", got, ok)
	}
	tree := plumbing.NewHash(up.Git("rev-parse", second+"^{tree}"))
	for _, h := range []plumbing.Hash{plumbing.NewHash(loose), plumbing.NewHash(strings.Repeat("ab", 20)), tree} {
		if q.hasCommit(h) {
			t.Errorf("hasCommit(%s) = true", h)
		}
	}
	if _, ok := q.peel(plumbing.NewHash(loose)); ok {
		t.Error("a loose object was peeled")
	}
}

// An index that is not whole, or of another version, is not read: its
// questions go to go-git, which finds the store damaged.
func TestQuickObjectsSkipBadIndexes(t *testing.T) {
	t.Parallel()
	up := packedRepo(t)
	head := up.Head()
	idx, _ := filepath.Glob(filepath.Join(up.Dir, ".git", "objects", "pack", "*.idx"))
	whole, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"truncated":     whole[:100],
		"one byte less": whole[:len(whole)-1],
		"version 1":     append(append([]byte{}, whole[:7]...), append([]byte{1}, whole[8:]...)...),
		"fan-out falls": append(append([]byte{}, whole[:8]...), append([]byte{0xff, 0xff, 0xff, 0xff}, whole[12:]...)...),
	} {
		os.Chmod(idx[0], 0o644)
		if err := os.WriteFile(idx[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		q := openQuickObjects(filepath.Join(up.Dir, ".git"))
		if len(q.packs) != 0 || q.hasCommit(plumbing.NewHash(head)) {
			t.Errorf("%s: the index was read", name)
		}
		q.Close()
	}
}

func atoi(t *testing.T, s string, line []string) int64 {
	t.Helper()
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("offset %q in %v", s, line)
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// An index whose entry for the commit points past the pack, past its
// table of large offsets, or at a large offset that is negative as an
// int64, is not followed: no panic, and no yes.
func TestQuickObjectsBadOffsets(t *testing.T) {
	t.Parallel()
	up := packedRepo(t)
	head := plumbing.NewHash(up.Head())
	idx, _ := filepath.Glob(filepath.Join(up.Dir, ".git", "objects", "pack", "*.idx"))
	whole, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	const namesAt = 8 + 256*4
	n := int(binary.BigEndian.Uint32(whole[8+255*4:]))
	at := -1
	for i := 0; i < n; i++ {
		if bytes.Equal(whole[namesAt+20*i:namesAt+20*i+20], head[:]) {
			at = namesAt + n*24 + 4*i
		}
	}
	if at < 0 {
		t.Fatal("the commit is not in the index")
	}
	withOffset := func(off uint32, large []byte) []byte {
		b := append([]byte{}, whole[:len(whole)-40]...)
		binary.BigEndian.PutUint32(b[at:], off)
		return append(append(b, large...), whole[len(whole)-40:]...)
	}
	q := openQuickObjects(filepath.Join(up.Dir, ".git"))
	ok := q.hasCommit(head)
	q.Close()
	if !ok {
		t.Fatal("the sound index does not find the commit")
	}
	for name, data := range map[string][]byte{
		"past the pack":             withOffset(0x7fffffff, nil),
		"before the pack's objects": withOffset(3, nil),
		"past the large table":      withOffset(0x80000001, make([]byte, 8)),
		"a negative large offset":   withOffset(0x80000000, []byte{0x80, 0, 0, 0, 0, 0, 0, 12}),
		"a large offset past":       withOffset(0x80000000, []byte{0, 0, 0, 1, 0, 0, 0, 0}),
	} {
		os.Chmod(idx[0], 0o644)
		if err := os.WriteFile(idx[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		q := openQuickObjects(filepath.Join(up.Dir, ".git"))
		if q.hasCommit(head) {
			t.Errorf("%s: found", name)
		}
		if _, _, ok := q.find(head); ok {
			t.Errorf("%s: found", name)
		}
		q.Close()
	}
}

// An index whose fan-out puts all its (sparse, zero) names in the bucket
// of the hash looked up is searched without reading the bucket whole.
func TestQuickObjectsHugeBucket(t *testing.T) {
	up := packedRepo(t)
	head := plumbing.NewHash(up.Head())
	idx, _ := filepath.Glob(filepath.Join(up.Dir, ".git", "objects", "pack", "*.idx"))
	const n = 10_000_000 // 200 MB of names
	head8 := make([]byte, 8+256*4)
	copy(head8, idxMagic)
	for i := int(head[0]); i < 256; i++ {
		binary.BigEndian.PutUint32(head8[8+4*i:], n)
	}
	os.Chmod(idx[0], 0o644)
	if err := os.WriteFile(idx[0], head8, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(idx[0], int64(len(head8))+n*(20+4+4)+2*20); err != nil {
		t.Fatal(err)
	}
	q := openQuickObjects(filepath.Join(up.Dir, ".git"))
	defer q.Close()
	if len(q.packs) != 1 {
		t.Fatal("the index was not opened")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, _, ok := q.find(head); ok {
		t.Error("found in an index of zeros")
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("a lookup allocated %d bytes", grew)
	}
}

// A folder of more packs than maxQuickPacks does not have them all open.
func TestQuickObjectsManyPacks(t *testing.T) {
	t.Parallel()
	up := packedRepo(t)
	dir := filepath.Join(up.Dir, ".git", "objects", "pack")
	idx, _ := filepath.Glob(filepath.Join(dir, "*.idx"))
	pack := strings.TrimSuffix(idx[0], ".idx") + ".pack"
	for i := 0; i <= maxQuickPacks; i++ {
		base := filepath.Join(dir, fmt.Sprintf("pack-%040d", i))
		if err := os.Link(idx[0], base+".idx"); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(pack, base+".pack"); err != nil {
			t.Fatal(err)
		}
	}
	q := openQuickObjects(filepath.Join(up.Dir, ".git"))
	defer q.Close()
	if len(q.packs) != maxQuickPacks {
		t.Errorf("%d packs open, want %d", len(q.packs), maxQuickPacks)
	}
}
