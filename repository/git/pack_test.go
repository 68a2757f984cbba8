package git

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/testmain"
)

// TestIndexPackMatchesGit indexes packs made by git, full of deltas, and
// compares the index byte for byte with the one git index-pack writes:
// in memory, streaming every object, and with no cache at all.
func TestIndexPackMatchesGit(t *testing.T) {
	t.Parallel()
	r := deltaRepo(t, 400, 30)
	for _, offsets := range []bool{true, false} {
		pack := packOf(t, r.Dir, offsets)
		want := gitIndex(t, pack)
		for _, lim := range []struct {
			inMemory int64
			cache    int
		}{{inMemoryObject, deltaBaseBudget}, {1, 0}, {4 << 10, 16 << 10}} {
			t.Run(fmt.Sprintf("ofs=%v/mem=%d/cache=%d", offsets, lim.inMemory, lim.cache), func(t *testing.T) {
				f, err := os.Open(pack)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				info, _ := f.Stat()
				idx, _, err := indexPackWithin(context.Background(), f, info.Size(), t.TempDir(), lim.inMemory, lim.cache)
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if _, err := idxfile.NewEncoder(&got).Encode(idx); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("index differs from git's (%d bytes, git %d)", got.Len(), len(want))
				}
			})
		}
	}
}

// TestIndexPackAcrossBuffers indexes a pack many times the size of the
// scanner's buffer, whose objects (hundreds of small ones and an
// incompressible blob of several buffers) start and end anywhere in it:
// every offset and CRC-32 must still be git's.
func TestIndexPackAcrossBuffers(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{}
	for i := 0; i < 600; i++ {
		files[fmt.Sprintf("small/%03d.txt", i)] = fmt.Sprintf("file %d %x\n", i, rng.Uint64())
	}
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	files["big.bin"] = string(big)
	r.CommitFiles("main", "one", files)
	pack := packOf(t, r.Dir, true)
	idx := strings.TrimSuffix(pack, ".pack") + ".idx"
	if out, err := exec.Command("git", "index-pack", "--index-version=2", "-o", idx, pack).CombinedOutput(); err != nil {
		t.Fatalf("git index-pack: %v\n%s", err, out)
	}
	want, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(pack)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	if info.Size() < 4*(64<<10) {
		t.Fatalf("the test pack is only %d bytes", info.Size())
	}
	got, _, err := indexPack(context.Background(), f, info.Size(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var enc bytes.Buffer
	if _, err := idxfile.NewEncoder(&enc).Encode(got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc.Bytes(), want) {
		t.Errorf("index differs from git's (%d bytes, git %d)", enc.Len(), len(want))
	}
}

func TestIndexPackRefusesBrokenPacks(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	r.Write("a.txt", strings.Repeat("some text\n", 100), 0)
	r.Commit("one")
	data, err := os.ReadFile(packOf(t, r.Dir, true))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0xff
	for name, pack := range map[string][]byte{
		"truncated": data[:len(data)-30],
		"flipped":   flipped,
		"empty":     nil,
		"count":     append(append(bytes.Clone(data[:8]), 0xff, 0xff, 0xff, 0xff), data[12:]...),
	} {
		if _, _, err := indexPack(context.Background(), bytes.NewReader(pack), int64(len(pack)), t.TempDir()); err == nil {
			t.Errorf("%s: a broken pack was indexed", name)
		}
	}
}

// deltaRepo is a repository of commits on main that each change a line
// of a.txt (lineCount lines long) and rewrite a dirN/b.txt, with an
// empty file: git packs it with chains of deltas. The commits are made
// by one git fast-import (two git processes a commit, 60 for 30, were
// most of the tests' time); the work tree stays empty.
func deltaRepo(t *testing.T, lineCount, commits int) *gittest.Repo {
	t.Helper()
	r := gittest.NewRepo(t, "main")
	var lines []string
	for i := 0; i < lineCount; i++ {
		lines = append(lines, fmt.Sprintf("line %d of a file that changes a little in every commit", i))
	}
	var stream strings.Builder
	data := func(s string) { fmt.Fprintf(&stream, "data %d\n%s\n", len(s), s) }
	file := func(name, content string) {
		fmt.Fprintf(&stream, "M 100644 inline %s\n", name)
		data(content)
	}
	const who = "Test <test@example.com> 1767323045 +0000" // 2026-01-02T03:04:05Z, as gittest commits
	for c := 0; c < commits; c++ {
		lines[(c*37)%len(lines)] = fmt.Sprintf("changed in commit %d", c)
		fmt.Fprintf(&stream, "commit refs/heads/main\nauthor %s\ncommitter %s\n", who, who)
		data(fmt.Sprintf("commit %d\n", c))
		file("a.txt", strings.Join(lines, "\n"))
		file(fmt.Sprintf("dir%d/b.txt", c%3), strings.Repeat(fmt.Sprintf("b%d ", c), 50+c))
		file("empty", "")
	}
	r.FastImport(stream.String())
	if n := strings.Count(r.Git("rev-list", "main"), "\n") + 1; n != commits {
		t.Fatalf("git fast-import made %d commits, want %d", n, commits)
	}
	return r
}

func packOf(t *testing.T, dir string, offsets bool) string {
	t.Helper()
	args := []string{"pack-objects", "--revs", "--stdout", "-q"}
	if offsets {
		args = append(args, "--delta-base-offset")
	}
	name := filepath.Join(t.TempDir(), "test.pack")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("HEAD\n")
	// Straight into the file: through the test's memory, a pack of
	// megabytes was a buffer grown and copied under the race detector.
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git pack-objects: %v\n%s", err, stderr.Bytes())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return name
}

// catFileBatch returns the content of each object, as one git cat-file
// --batch reads them.
func catFileBatch(t *testing.T, dir string, hashes []string) map[string]string {
	t.Helper()
	objects := map[string]string{}
	for h, o := range catFileObjects(t, dir, hashes) {
		objects[h] = o.data
	}
	return objects
}

// gitObject is an object as git cat-file --batch prints it.
type gitObject struct{ kind, data string }

// catFileObjects returns the type and content of each object, as one git
// cat-file --batch reads them (one git process, not one or two per
// object).
func catFileObjects(t *testing.T, dir string, hashes []string) map[string]gitObject {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(hashes, "\n") + "\n")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	// Each object is read into a string of its size, as the header
	// gives it: not the whole output into a buffer grown as it comes.
	r := bufio.NewReaderSize(out, 64<<10)
	objects := map[string]gitObject{}
	for _, h := range hashes {
		header, err := r.ReadString('\n')
		var hash, kind string
		var size int
		if n, serr := fmt.Sscanf(header, "%s %s %d\n", &hash, &kind, &size); err != nil || serr != nil || n != 3 || hash != h || size < 0 {
			t.Fatalf("git cat-file --batch: %q for %s: %v", header, h, err)
		}
		var data strings.Builder
		data.Grow(size)
		if n, err := io.CopyN(&data, r, int64(size)); err != nil || n != int64(size) {
			t.Fatalf("git cat-file --batch: %s: read %d of %d bytes: %v", h, n, size, err)
		}
		if b, err := r.ReadByte(); err != nil || b != '\n' {
			t.Fatalf("git cat-file --batch: %s: no newline after the object: %v", h, err)
		}
		objects[h] = gitObject{kind, data.String()}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("git cat-file --batch: more output than the %d objects asked: %v", len(hashes), err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	return objects
}

func gitIndex(t *testing.T, pack string) []byte {
	t.Helper()
	idx := strings.TrimSuffix(pack, ".pack") + ".idx"
	if out, err := exec.Command("git", "index-pack", "--index-version=2", "-o", idx, pack).CombinedOutput(); err != nil {
		t.Fatalf("git index-pack: %v\n%s", err, out)
	}
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	// A pack without chains of deltas would test little.
	if out, err := exec.Command("git", "verify-pack", "-s", idx).CombinedOutput(); err != nil || !strings.Contains(string(out), "chain length = 3") {
		t.Fatalf("the test pack has no delta chains: %v\n%s", err, out)
	}
	if err := os.Remove(idx); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPackedObjectsReadLikeGit reads every blob of a pack full of deltas
// and compares size and content with git cat-file: in memory, and with
// every base spooled to disk and every target streamed.
func TestPackedObjectsReadLikeGit(t *testing.T) {
	t.Parallel()
	// One repository, read-only below, packed two ways: deltas naming
	// their base by offset, and by hash.
	r, blobs, wants := bigDeltaRepo(t)
	for _, offsets := range []bool{true, false} {
		t.Run(fmt.Sprintf("offsets=%v", offsets), func(t *testing.T) {
			t.Parallel()
			testPackedObjectsReadLikeGit(t, r.Dir, blobs, wants, offsets)
		})
	}
}

// bigDeltaRepo makes the repository TestPackedObjectsReadLikeGit packs:
// twelve commits of a large file that changes a little and a small one.
// It returns the repository, the hashes of every blob the commits add or
// change, and their content as git cat-file reads it.
func bigDeltaRepo(t *testing.T) (*gittest.Repo, []string, map[string]string) {
	r := gittest.NewRepo(t, "main")
	var lines []string
	for i := 0; i < 3000; i++ {
		lines = append(lines, fmt.Sprintf("line %d of a large file that changes a little in every commit", i))
	}
	for c := 0; c < 12; c++ {
		lines[(c*997)%len(lines)] = fmt.Sprintf("changed in commit %d", c)
		lines = append(lines[:c*50], lines[c*50+40:]...) // moved and dropped blocks: copies from anywhere in the base
		lines = append(lines, fmt.Sprintf("appended %d", c))
		r.Write("big.txt", strings.Join(lines, "\n"), 0)
		r.Write("small.txt", strings.Repeat(fmt.Sprintf("s%d ", c), 20), 0)
		r.Commit(fmt.Sprintf("commit %d", c))
	}
	var blobs []string
	for _, f := range strings.Fields(r.Git("log", "--all", "--format=", "--raw", "--no-abbrev", "--diff-filter=AM")) {
		if len(f) == 40 && strings.Trim(f, "0") != "" {
			blobs = append(blobs, f)
		}
	}
	return r, blobs, catFileBatch(t, r.Dir, blobs)
}

func testPackedObjectsReadLikeGit(t *testing.T, repo string, blobs []string, wants map[string]string, offsets bool) {
	store := t.TempDir()
	dir := filepath.Join(store, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pack := packOf(t, repo, offsets)
	gitIndex(t, pack)
	data, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp_pack_test")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := installPack(context.Background(), tmp, dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, lim := range []struct{ inMemory, streamAbove int64 }{{inMemoryObject, streamThreshold}, {1, 0}} {
		p, err := openPackedObjects(store)
		if err != nil {
			t.Fatal(err)
		}
		p.inMemory, p.streamAbove = lim.inMemory, lim.streamAbove
		checked := 0
		var last plumbing.Hash
		for _, f := range blobs {
			want := wants[f]
			h := plumbing.NewHash(f)
			size, err := p.Size(h)
			if err != nil {
				t.Fatalf("size of %s: %v", f, err)
			}
			rc, err := p.Open(h)
			if err != nil {
				t.Fatalf("open %s: %v", f, err)
			}
			n, same, err := sameAs(rc, want)
			rc.Close()
			if err != nil {
				t.Fatalf("read %s: %v", f, err)
			}
			if !same || size != n {
				t.Errorf("blob %s: %d bytes (size %d) differ from git's %d", f, n, size, len(want))
			}
			checked++
			last = h
		}
		if checked < 20 {
			t.Fatalf("only %d blobs checked", checked)
		}
		// The packs stay open between reads; once closed, a read opens
		// them again.
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if size, err := p.Size(last); err != nil || size == 0 {
			t.Errorf("size after Close: %d %v", size, err)
		}
		p.Close()
		if left, _ := filepath.Glob(filepath.Join(dir, "tmp_*")); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}

// sameAs reads r to its end and reports how many bytes it read and
// whether they are want, byte for byte. It compares as it reads, in one
// small buffer: reading each blob whole into a slice grown as it came
// was most of TestPackedObjectsReadLikeGit's CPU under the race
// detector.
func sameAs(r io.Reader, want string) (int64, bool, error) {
	var buf [32 << 10]byte
	var n int64
	same := true
	for {
		k, err := r.Read(buf[:])
		if k > 0 {
			if same && (n+int64(k) > int64(len(want)) || string(buf[:k]) != want[n:n+int64(k)]) {
				same = false
			}
			n += int64(k)
		}
		if err == io.EOF {
			return n, same && n == int64(len(want)), nil
		}
		if err != nil {
			return n, false, err
		}
	}
}

// A 10-byte blob stored as a delta on a 64 MiB blob of zeros, as no git
// makes but anyone can send: indexing streams the base, and reading the
// small blob is refused when its base is over the limit, before the base
// is rebuilt.
func TestPackedObjectsRefuseHugeBases(t *testing.T) {
	// It measures the memory of the whole process, which parallel tests
	// would add to: it runs in a process of its own, beside them.
	if testmain.OwnProcess(t) {
		return
	}
	var pack bytes.Buffer
	pack.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x02")
	base := int64(pack.Len())
	pack.Write(entryHeader(3, 64<<20)) // a blob
	// Any zlib stream of the zeros will do: gittest writes one by hand,
	// where the race-built compressor took seconds over 64 MiB.
	pack.Write(gittest.ZlibZeros(64 << 20))
	delta := append(append(varint(64<<20), varint(10)...), 0x90, 10) // copy 10 bytes from 0
	at := int64(pack.Len())
	pack.Write(entryHeader(6, int64(len(delta)))) // an offset delta
	pack.Write(ofsDelta(at - base))
	zw := zlib.NewWriter(&pack)
	zw.Write(delta)
	zw.Close()
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])

	store := t.TempDir()
	dir := filepath.Join(store, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp_pack_crafted")
	if err := os.WriteFile(tmp, pack.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = installPack(context.Background(), tmp, dir, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("indexing allocated %d MiB", n>>20)
	}
	p, err := openPackedObjects(store)
	if err != nil {
		t.Fatal(err)
	}
	small := plumbing.ComputeHash(plumbing.BlobObject, make([]byte, 10))
	if size, err := p.Size(small); err != nil || size != 10 {
		t.Fatalf("size = %d, %v", size, err)
	}
	p.maxBase = 32 << 20
	if _, err := p.Open(small); !errors.Is(err, ErrTooLarge) {
		t.Errorf("open of a blob made from a 64 MiB base = %v, want ErrTooLarge", err)
	}
	p.maxBase = 0
	r, err := p.Open(small)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, make([]byte, 10)) {
		t.Errorf("without a limit the blob reads %q, %v", got, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "tmp_*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// entryHeader encodes a pack entry's type and inflated size.
func entryHeader(typ byte, size int64) []byte {
	b := []byte{typ<<4 | byte(size&15)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

// ofsDelta encodes the distance back to an offset delta's base.
func ofsDelta(n int64) []byte {
	b := []byte{byte(n & 0x7f)}
	for n >>= 7; n > 0; n >>= 7 {
		n--
		b = append([]byte{0x80 | byte(n&0x7f)}, b...)
	}
	return b
}

func varint(n int64) []byte {
	var b []byte
	for ; n >= 0x80; n >>= 7 {
		b = append(b, byte(n)|0x80)
	}
	return append(b, byte(n))
}

// A blob whose header declares one byte more, or one less, than its data
// inflates to is refused, not cut or padded.
func TestPackedObjectsRefuseAWrongSize(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	content := strings.Repeat("sixteen bytes!!\n", 4) // 64 bytes: the size's low bits are 0
	r.Write("a.txt", content, 0)
	r.Commit("one blob")
	blob := plumbing.NewHash(strings.TrimSpace(r.Git("rev-parse", "HEAD:a.txt")))
	for _, delta := range []byte{1, 0xf} { // 65 bytes, and 79
		pack := packOf(t, r.Dir, true)
		if out, err := exec.Command("git", "index-pack", pack).CombinedOutput(); err != nil {
			t.Fatalf("git index-pack: %v\n%s", err, out)
		}
		pi, err := readPackIndex(pack)
		if err != nil {
			t.Fatal(err)
		}
		p := &packedObjects{packs: []*packIndex{pi}}
		at, ok := p.find(blob)
		if !ok {
			t.Fatal("blob not in the pack")
		}
		p.Close()
		data, err := os.ReadFile(pack)
		if err != nil {
			t.Fatal(err)
		}
		if data[at.offset]&0x0f != 0 {
			t.Fatalf("header byte %#x", data[at.offset])
		}
		data[at.offset] |= delta
		if err := os.WriteFile(pack, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rc, err := p.Open(blob)
		if err == nil {
			_, err = io.ReadAll(rc)
			rc.Close()
		}
		if !errors.Is(err, errInflatedSize) {
			t.Errorf("size off by %d: %v, want errInflatedSize", delta, err)
		}
		p.Close()
	}
}
