package git

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestHeaderCacheReadsWhatReadAtReads: from kept blocks or not, at a
// block's start or end, straddling two, at the pack's short last block
// and past its end, read gives the bytes ReadAt gives, also with reads
// side by side (run with -race).
func TestHeaderCacheReadsWhatReadAtReads(t *testing.T) {
	size := 3*headerBlock + 1000 // a short last block
	path, content, f := randomPack(t, size, 1)

	want := func(offset int64) []byte {
		end := min(int(offset)+maxHeader, size)
		return content[offset:end]
	}
	var c headerCache
	pi := &packIndex{path: path}
	check := func(t *testing.T, offset int64) {
		var buf [maxHeader]byte
		n, err := c.read(pi, f, buf[:], offset)
		if err != nil {
			t.Errorf("read at %d: %v", offset, err)
			return
		}
		if !bytes.Equal(buf[:n], want(offset)) {
			t.Errorf("read at %d gave %d bytes unlike the file's", offset, n)
		}
	}
	offsets := []int64{0, 1, headerBlock - int64(maxHeader), headerBlock - int64(maxHeader) + 1, headerBlock - 1, headerBlock,
		2*headerBlock - 5, 3 * headerBlock, 3*headerBlock + 1, int64(size) - int64(maxHeader), int64(size) - 1}
	for _, o := range offsets {
		check(t, o) // a miss, or a block kept by the last
		check(t, o) // kept now, where it may be
	}
	if len(c.blocks) == 0 {
		t.Error("no block was kept")
	}
	if _, ok := c.blocks[packedAt{pi, 3 * headerBlock}]; ok {
		t.Error("the pack's short last block was kept")
	}
	var buf [maxHeader]byte
	if n, err := c.read(pi, f, buf[:], int64(size)); err == nil && n > 0 {
		t.Errorf("read past the end gave %d bytes", n)
	}

	// More blocks than are kept, side by side.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for range 2000 {
				check(t, int64(r.UintN(uint(size))))
			}
		})
	}
	wg.Wait()
	if len(c.blocks) > headerBlocks || len(c.order) != len(c.blocks) {
		t.Errorf("%d blocks kept, %d in order; at most %d", len(c.blocks), len(c.order), headerBlocks)
	}
}

// TestPackReaderReadsWhatTheFileHolds: through kept blocks and preads in
// turn, from any offset to the end, packReader gives the file's bytes.
func TestPackReaderReadsWhatTheFileHolds(t *testing.T) {
	size := 5*headerBlock + 777
	path, content, f := randomPack(t, size, 3)
	var c headerCache
	pi := &packIndex{path: path, size: int64(size)}
	var buf [maxHeader]byte
	for _, o := range []int64{10, 2*headerBlock + 5, 4 * headerBlock} { // blocks 0, 2 and 4 kept
		if _, err := c.read(pi, f, buf[:], o); err != nil {
			t.Fatal(err)
		}
	}
	for _, start := range []int64{0, 1, headerBlock - 1, headerBlock, 2*headerBlock + 100, int64(size) - 3, int64(size)} {
		for _, chunk := range []int{1, 100, 4096, 16 << 10, 64 << 10} {
			r := &packReader{&c, pi, f, start, int64(size)}
			var got []byte
			b := make([]byte, chunk)
			for {
				n, err := r.Read(b)
				got = append(got, b[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("from %d in reads of %d: %v", start, chunk, err)
				}
				if n == 0 {
					t.Fatalf("from %d in reads of %d: a read of nothing", start, chunk)
				}
			}
			if !bytes.Equal(got, content[start:]) {
				t.Errorf("from %d in reads of %d: %d bytes unlike the file's %d", start, chunk, len(got), size-int(start))
			}
		}
	}
}

// randomPack writes size bytes drawn from seed to a file standing in for
// a pack, and opens it for the test.
func randomPack(t *testing.T, size int, seed uint64) (string, []byte, *os.File) {
	t.Helper()
	content := make([]byte, size)
	rnd := rand.New(rand.NewPCG(seed, seed+1))
	for i := range content {
		content[i] = byte(rnd.UintN(256))
	}
	path := filepath.Join(t.TempDir(), "pack")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, content, f
}

// TestHeaderCacheRecyclesBlocksSafely: with more blocks read than are
// kept, the buffer of the block let go holds the next one, while other
// goroutines copy from kept blocks; every byte read, by a header's read
// or by a packReader, is still the file's (run with -race).
func TestHeaderCacheRecyclesBlocksSafely(t *testing.T) {
	size := (2*headerBlocks+3)*headerBlock + 123
	path, content, f := randomPack(t, size, 5)
	var c headerCache
	pi := &packIndex{path: path, size: int64(size)}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 11))
			for range 3000 {
				off := int64(r.UintN(uint(size)))
				var buf [maxHeader]byte
				n, err := c.read(pi, f, buf[:], off)
				if err != nil || !bytes.Equal(buf[:n], content[off:min(int(off)+maxHeader, size)]) {
					t.Errorf("header read at %d: %d bytes unlike the file's, %v", off, n, err)
					return
				}
				pr := &packReader{&c, pi, f, off, int64(size)}
				got := make([]byte, 1+r.UintN(20<<10))
				n, err = io.ReadFull(pr, got)
				if want := content[off:min(int(off)+len(got), size)]; !bytes.Equal(got[:n], want) || (err != nil && n != len(want)) {
					t.Errorf("pack read at %d: %d bytes unlike the file's, %v", off, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(c.blocks) != headerBlocks || len(c.order) != headerBlocks {
		t.Errorf("%d blocks kept, %d in order; want %d", len(c.blocks), len(c.order), headerBlocks)
	}
}

// readHeader names the offset of a header it cannot read; one it can
// gives its type, length and base, and costs no allocation: the error's
// text was once made ahead for every header read.
// Not parallel: AllocsPerRun counts the whole process's allocations.
func TestReadHeaderNamesTheOffsetOfABadOne(t *testing.T) {
	tests := []struct {
		name   string
		header []byte
		offset int64
		want   objectHeader
		err    string
	}{
		{name: "blob of 5", header: []byte{0x35}, offset: 12, want: objectHeader{kind: plumbing.BlobObject, length: 5}},
		{name: "tree of 300", header: []byte{0xac, 0x12}, offset: 12, want: objectHeader{kind: plumbing.TreeObject, length: 300}},
		{name: "offset delta", header: []byte{0x65, 0x07}, offset: 100, want: objectHeader{kind: plumbing.OFSDeltaObject, length: 5, base: 93}},
		{name: "empty", header: nil, offset: 12, err: "object at 12 has a malformed header"},
		{name: "length cut short", header: []byte{0xb5}, offset: 7, err: "object at 7 has a malformed header"},
		{name: "delta base before the pack", header: []byte{0x65, 0x7f}, offset: 40, err: "object at 40 has a malformed header"},
		{name: "unknown type", header: []byte{0x55}, offset: 9, err: "object at 9 has unknown type 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readHeader(bytes.NewReader(tt.header), tt.offset)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
			r := bytes.NewReader(tt.header)
			if n := testing.AllocsPerRun(50, func() {
				r.Reset(tt.header)
				_, _ = readHeader(r, tt.offset)
			}); n != 0 {
				t.Errorf("a good header costs %v allocations", n)
			}
		})
	}
}
