package git

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
)

// installSpooled installs the pack at pack into a new store, spooling
// into a spool of limit bytes, and returns the store and the spool.
func installSpooled(t *testing.T, pack string, limit int64) (string, *spoolFile) {
	t.Helper()
	store := t.TempDir()
	dir := filepath.Join(store, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp_pack_test")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sw := newSpoolWriter(dir, limit)
	if sw == nil {
		t.Fatal("no spool")
	}
	if err := installPack(context.Background(), tmp, dir, sw); err != nil {
		sw.discard()
		t.Fatal(err)
	}
	return store, sw.finish()
}

// Every object indexing inflates, whole or rebuilt from deltas, is served
// from the spool as git has it, with the pack file gone: the spool alone
// serves them. Once the spools are closed, reads go to the packs again.
func TestSpoolServesTheObjectsIndexingHashed(t *testing.T) {
	t.Parallel()
	r := deltaRepo(t, 300, 12)
	pack := packOf(t, r.Dir, true)
	gitIndex(t, pack) // checks the pack has chains of deltas
	store, spool := installSpooled(t, pack, spoolLimit(1<<20))
	if spool == nil {
		t.Fatal("nothing spooled")
	}
	dir := filepath.Join(store, "objects", "pack")
	if left, _ := filepath.Glob(filepath.Join(dir, "tmp_*")); runtime.GOOS != "windows" && len(left) > 0 {
		t.Errorf("the spool is not unlinked: %v", left)
	}
	p, spools := spooledObjects(t, store, spool)
	packs, _ := filepath.Glob(filepath.Join(dir, "pack-*.pack"))
	for _, name := range packs {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	objects := strings.Fields(r.Git("rev-list", "--objects", "--all", "--no-object-names"))
	gitObjects := catFileObjects(t, r.Dir, objects)
	blobs, trees := 0, 0
	var last plumbing.Hash
	for _, o := range objects {
		h := plumbing.NewHash(o)
		switch gitObjects[o].kind {
		case "blob":
			want := gitObjects[o].data
			rc, size, err := p.OpenSized(h, 0)
			if err != nil {
				t.Fatalf("open %s: %v", o, err)
			}
			n, same, err := sameAs(rc, want)
			rc.Close()
			if err != nil || !same || size != n {
				t.Errorf("blob %s: %d bytes (size %d, %v) differ from git's", o, n, size, err)
			}
			if n, err := p.Size(h); err != nil || n != size {
				t.Errorf("size of %s: %d %v, want %d", o, n, err, size)
			}
			if _, _, err := p.OpenSized(h, size-1); size > 0 && err != errOverLimit {
				t.Errorf("blob %s over a limit of %d: %v", o, size-1, err)
			}
			blobs++
			last = h
		case "tree":
			mo, err := p.readMeta(h, plumbing.TreeObject)
			if err != nil {
				t.Fatalf("tree %s: %v", o, err)
			}
			if plumbing.ComputeHash(plumbing.TreeObject, mo.b) != h {
				t.Errorf("tree %s: other content", o)
			}
			if _, _, err := p.OpenSized(h, 0); err == nil || !strings.Contains(err.Error(), "not a blob") {
				t.Errorf("tree %s opened as a blob: %v", o, err)
			}
			trees++
		}
	}
	if blobs < 20 || trees < 10 {
		t.Fatalf("only %d blobs and %d trees checked", blobs, trees)
	}
	spools.Close()
	if _, _, err := p.OpenSized(last, 0); err == nil {
		t.Error("a closed spool still served a blob whose pack is gone")
	}
	p.Close()
}

// A spool keeps nothing past its limit nor any object over
// maxSpoolObject; what it leaves out is read from the pack.
func TestSpoolIsBounded(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	for i := 0; i < 40; i++ {
		r.Write(fmt.Sprintf("small/%02d.txt", i), strings.Repeat(fmt.Sprintf("%d", i), 100), 0)
	}
	r.WriteFrom("zeros.bin", gittest.Zeros(maxSpoolObject+1), 0)
	r.Commit("one")
	pack := packOf(t, r.Dir, true)
	const limit = 2 << 10
	store, spool := installSpooled(t, pack, limit)
	if spool == nil {
		t.Fatal("nothing spooled")
	}
	var total int64
	for h, o := range spool.objects {
		if o.size > maxSpoolObject {
			t.Errorf("%s of %d bytes spooled", h, o.size)
		}
		total = max(total, o.off+o.size)
	}
	if info, _ := spool.f.Stat(); total > limit || info.Size() > limit {
		t.Errorf("spool of %d bytes (file %d), over its limit of %d", total, info.Size(), limit)
	}
	if len(spool.objects) < 5 {
		t.Errorf("only %d objects spooled", len(spool.objects))
	}
	p, _ := spooledObjects(t, store, spool)
	for _, name := range []string{"zeros.bin", "small/39.txt"} {
		h := plumbing.NewHash(strings.TrimSpace(r.Git("rev-parse", "HEAD:"+name)))
		rc, size, err := p.OpenSized(h, 0)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		// Hashed as it is read: read whole, 8 MiB grown from 512 bytes
		// was half of this test's CPU under the race detector.
		sum := plumbing.NewHasher(plumbing.BlobObject, size)
		n, err := io.Copy(sum, rc)
		rc.Close()
		if err != nil || n != size || sum.Sum() != h {
			t.Errorf("%s: %d bytes, %v", name, n, err)
		}
	}
	if spoolLimit(1<<40) != maxObjectSpool || spoolLimit(1<<20) != spoolRatio<<20+spoolSlack {
		t.Errorf("spool limits %d, %d", spoolLimit(1<<40), spoolLimit(1<<20))
	}
}

// An object whose bytes do not all reach the spool is not recorded, and a
// spool whose file fails keeps nothing.
func TestSpoolWriterRecordsOnlyWholeObjects(t *testing.T) {
	t.Parallel()
	sw := newSpoolWriter(t.TempDir(), 1<<20)
	w := sw.begin(5)
	w.Write([]byte("abc"))
	sw.end(plumbing.ComputeHash(plumbing.BlobObject, []byte("abc")), plumbing.BlobObject, 5, 0)
	if len(sw.objects) != 0 || sw.finish() != nil {
		t.Error("a short object was recorded")
	}

	sw = newSpoolWriter(t.TempDir(), 1<<20)
	w = sw.begin(3)
	w.Write([]byte("abc"))
	h := plumbing.ComputeHash(plumbing.BlobObject, []byte("abc"))
	sw.end(h, plumbing.BlobObject, 3, 0)
	sw.f.Close() // the next flush fails
	sw.begin(int64(sw.bw.Available() + 1)).Write(bytes.Repeat([]byte("x"), sw.bw.Available()+1))
	if f := sw.finish(); f != nil {
		f.close()
		t.Error("a spool whose file failed was kept")
	}
}

// A sync in the process that fetched reads the commit, the trees and the
// blobs from what the download spooled: with the store's pack gone, the
// skills still read, and no longer once the source is closed.
func TestFetchSpoolsForTheSyncThatFollows(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Write("skills/one/notes/long.md", strings.Repeat("a note\n", 5000), 0)
	up.Commit("one")
	g := NewGit(GitConfig{Source: "team", URL: up.URL(), Depth: 1, Timeout: 30 * time.Second, StoreRoot: t.TempDir()}, repository.Options{MaxFileSize: 10 << 20})
	defer g.Close()
	if _, err := g.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(g.StoreDir(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs after the fetch: %v", packs)
	}
	if err := os.Remove(packs[0]); err != nil {
		t.Fatal(err)
	}
	fsys, err := g.FS(context.Background())
	if err != nil {
		t.Fatalf("FS from the spool: %v", err)
	}
	got, err := fs.ReadFile(fsys, "skills/one/notes/long.md")
	if err != nil || string(got) != strings.Repeat("a note\n", 5000) {
		t.Errorf("read from the spool: %d bytes, %v", len(got), err)
	}
	if skills, _, err := g.Skills(context.Background()); err != nil || len(skills) != 1 {
		t.Errorf("skills from the spool: %v, %v", skills, err)
	}
	g.Close()
	if _, err := g.FS(context.Background()); err == nil {
		if _, err := fs.ReadFile(fsys, "skills/one/notes/long.md"); err == nil {
			t.Error("read a file whose pack is gone after Close")
		}
	}
}

// A pack received in small writes is indexed as it comes: the index is
// git's, and the objects are spooled. A pack cut short, or a transfer
// stopped, ends the indexing with the receiver, leaving nothing.
func TestPackReceiverIndexesAsItReceives(t *testing.T) {
	t.Parallel()
	r := deltaRepo(t, 300, 12)
	pack := packOf(t, r.Dir, true)
	want := gitIndex(t, pack)
	data, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	receive := func(t *testing.T, data []byte, cancelAt int) (*packReceiver, string, error) {
		store := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p, err := newPackReceiver(ctx, cancel, store, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(data); i += 777 {
			if i >= cancelAt {
				cancel()
			}
			p.Write(data[i:min(i+777, len(data))])
		}
		return p, filepath.Join(store, "objects", "pack"), p.Close()
	}
	p, dir, err := receive(t, data, len(data))
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("indexes: %v", idx)
	}
	if got, err := os.ReadFile(idx[0]); err != nil || !bytes.Equal(got, want) {
		t.Errorf("index differs from git's (%d bytes, git %d): %v", len(got), len(want), err)
	}
	if p.spool == nil || len(p.spool.objects) < 30 {
		t.Error("the received pack's objects were not spooled")
	} else {
		p.spool.close()
	}
	for name, cut := range map[string]struct {
		data     []byte
		cancelAt int
	}{
		"cut short":      {data[:len(data)/2], len(data)},
		"no checksum":    {data[:len(data)-20], len(data)},
		"stopped":        {data, len(data) / 3},
		"nothing at all": {nil, 1},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan struct{})
			var p *packReceiver
			var dir string
			var err error
			go func() {
				defer close(done)
				p, dir, err = receive(t, cut.data, cut.cancelAt)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the receiver did not end")
			}
			if (err == nil) != (len(cut.data) == 0) {
				t.Errorf("close: %v", err)
			}
			if p.spool != nil {
				t.Error("a spool was kept")
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
				t.Errorf("left in the store: %v", left)
			}
		})
	}
}

// A small blob rebuilt from a base over the reader's maxBase is refused
// from the spool as from the pack: a sync refuses it whether or not it
// follows the fetch in its process.
func TestSpoolKeepsTheLimitOnBases(t *testing.T) {
	t.Parallel()
	const baseSize = 2 << 20
	var pack bytes.Buffer
	pack.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x02")
	base := int64(pack.Len())
	pack.Write(entryHeader(3, baseSize)) // a blob of zeros
	zw := zlib.NewWriter(&pack)
	zw.Write(make([]byte, baseSize))
	zw.Close()
	delta := append(append(varint(baseSize), varint(10)...), 0x90, 10) // copy 10 bytes from 0
	at := int64(pack.Len())
	pack.Write(entryHeader(6, int64(len(delta)))) // an offset delta
	pack.Write(ofsDelta(at - base))
	zw = zlib.NewWriter(&pack)
	zw.Write(delta)
	zw.Close()
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	name := filepath.Join(t.TempDir(), "crafted.pack")
	if err := os.WriteFile(name, pack.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	store, spool := installSpooled(t, name, spoolLimit(int64(pack.Len())))
	small := plumbing.ComputeHash(plumbing.BlobObject, make([]byte, 10))
	if o, ok := spool.objects[small]; !ok || o.chainBase != baseSize {
		t.Fatalf("the small blob's spool entry: %+v %v", o, ok)
	}
	p, _ := spooledObjects(t, store, spool)
	p.maxBase = 1 << 20
	if _, _, err := p.OpenSized(small, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("open of a blob made from a 2 MiB base over a limit of 1 MiB = %v, want ErrTooLarge", err)
	}
	p.maxBase = 0
	rc, _, err := p.OpenSized(small, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, make([]byte, 10)) {
		t.Errorf("without a limit the blob reads %q, %v", got, err)
	}
}

// spooledObjects opens store's packs with spool attached, as a fetch
// leaves them for the sync; both are closed when the test ends (closing
// the spools again is harmless).
func spooledObjects(t *testing.T, store string, spool *spoolFile) (*packedObjects, *objectSpools) {
	t.Helper()
	p, err := openPackedObjects(store)
	if err != nil {
		t.Fatal(err)
	}
	spools := &objectSpools{}
	spools.add(spool)
	p.spools = spools
	t.Cleanup(func() {
		spools.Close()
		p.Close()
	})
	return p, spools
}
