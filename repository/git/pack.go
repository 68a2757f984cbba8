package git

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/klauspost/compress/zlib"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// A fetched pack is received and indexed here rather than by go-git, whose
// indexer reads every object of the pack into memory once more after
// hashing it: a 1 MiB pack holding a 1 GiB blob of zeros cost 1 GiB of
// memory. Here a whole object is hashed while it streams; a delta is
// applied to its base held in memory when small, or spooled to a
// temporary file when large, and its result streams into the hash; a
// chain of deltas holds two objects at a time; bases wait for their next
// delta in a cache of bounded size.

// DefaultMaxFetchSize bounds the bytes one fetch may download when the
// config sets no limit.
const DefaultMaxFetchSize = 1 << 30

const (
	// inMemoryObject is the largest delta base held in memory; a larger
	// one is spooled to a temporary file.
	inMemoryObject = 8 << 20
	// deltaBaseBudget bounds the delta bases kept for their next delta.
	deltaBaseBudget = 32 << 20
	// maxMetaObject bounds commits, trees and tags. go-git reads each of
	// them whole, and real ones are far smaller; blobs are streamed and
	// have no such bound.
	maxMetaObject = 16 << 20
	// maxSpool bounds the disk that objects too large for memory take
	// while a pack is indexed.
	maxSpool = 4 << 30
	// maxDeltaChain is git's own bound on delta chains (pack-objects'
	// OE_DEPTH_BITS); a longer one is a hostile pack.
	maxDeltaChain = 4095
	// streamThreshold is the size over which a blob stored as a delta
	// streams to its reader as it is rebuilt, rather than being rebuilt
	// first; a blob stored whole always streams.
	streamThreshold = 256 << 10
)

// ErrSourceTooLarge is wrapped by the error of a fetch whose download
// would be over the source's size limit.
var ErrSourceTooLarge = errors.New("the download is over the source's size limit")

// errBadPack is wrapped by errors for packs that do not parse or whose
// checksum does not match.
var errBadPack = errors.New("bad pack from the remote")

// fetchStorer is the store as one fetch sees it: every pack it receives
// goes through a packReceiver.
type fetchStorer struct {
	storage.Storer
	receive func() (*packReceiver, error)
}

// PackfileWriter implements storer.PackfileWriter, which go-git uses for
// the pack of a fetch.
func (s *fetchStorer) PackfileWriter() (io.WriteCloser, error) { return s.receive() }

var _ storer.PackfileWriter = (*fetchStorer)(nil)

// packReceiver writes a pack to a temporary file in the store, checking
// its size as it comes, and indexes it as it arrives, on a goroutine of
// its own that reads what the file holds so far: the indexing overlaps
// the transfer (and the remote's work to make the pack) instead of
// following it. Close waits for the index, checks the pack's checksum and
// moves both into place.
//
// A failure while receiving (the size limit, a full disk) is recorded and
// stops the transfer through stop, and the rest of the data is discarded
// rather than refused: go-git waits for a file:// remote's upload-pack to
// exit, and one blocked on a full pipe that nobody reads never does.
type packReceiver struct {
	ctx   context.Context
	stop  context.CancelFunc
	dir   string // objects/pack of the store
	limit int64  // bytes; 0 means none
	file  *os.File
	n     int64
	sum   hash.Hash // SHA-1 of everything but the last 20 bytes
	tail  []byte    // the last 20 bytes seen: the pack's checksum at the end
	err   error
	// grow is the file as the indexer reads it; indexed is closed once
	// the indexer is done, with idx, idxSum and idxErr set; stopIndex
	// stops it.
	grow      *growingPack
	indexed   chan struct{}
	stopIndex context.CancelFunc
	idx       *idxfile.MemoryIndex
	idxSum    plumbing.Hash
	idxErr    error
	keep      *spoolWriter
	// spool, once Close succeeded, holds the objects indexing inflated
	// (see objectSpools); nil when none were kept.
	spool *spoolFile
}

func newPackReceiver(ctx context.Context, stop context.CancelFunc, store string, limit int64) (*packReceiver, error) {
	dir := filepath.Join(store, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return nil, err
	}
	p := &packReceiver{ctx: ctx, stop: stop, dir: dir, limit: limit, file: f, sum: sha1.New(), tail: make([]byte, 0, 2*sha1.Size)}
	p.grow = newGrowingPack(f)
	p.keep = newSpoolWriter(dir, 0)
	if p.keep != nil {
		// The spool's limit follows the pack's bytes received so far.
		p.keep.bound = func() int64 { return spoolLimit(p.grow.received()) }
	}
	ictx, cancel := context.WithCancel(ctx)
	p.stopIndex = cancel
	p.indexed = make(chan struct{})
	go func() {
		defer close(p.indexed)
		defer context.AfterFunc(ictx, p.grow.stop)()
		p.idx, p.idxSum, p.idxErr = indexPackGrowing(ictx, p.grow, dir, p.keep)
	}()
	return p, nil
}

// Write always accepts b; see packReceiver.
func (p *packReceiver) Write(b []byte) (int, error) {
	if p.err != nil {
		return len(b), nil
	}
	if p.limit > 0 && p.n+int64(len(b)) > p.limit {
		p.fail(fmt.Errorf("%w: more than %d bytes (max_fetch_size)", ErrSourceTooLarge, p.limit))
		return len(b), nil
	}
	if _, err := p.file.Write(b); err != nil {
		p.fail(fmt.Errorf("write pack: %w", err))
		return len(b), nil
	}
	p.n += int64(len(b))
	p.grow.grew(int64(len(b)))
	p.hashAllButTail(b)
	return len(b), nil
}

// hashAllButTail feeds the checksum everything but the last 20 bytes seen.
func (p *packReceiver) hashAllButTail(b []byte) {
	if len(b) >= sha1.Size {
		p.sum.Write(p.tail)
		p.sum.Write(b[:len(b)-sha1.Size])
		p.tail = append(p.tail[:0], b[len(b)-sha1.Size:]...)
		return
	}
	p.tail = append(p.tail, b...)
	if extra := len(p.tail) - sha1.Size; extra > 0 {
		p.sum.Write(p.tail[:extra])
		p.tail = p.tail[:copy(p.tail, p.tail[extra:])]
	}
}

func (p *packReceiver) fail(err error) {
	if p.err == nil {
		p.err = err
		p.stop()
		p.grow.stop()
	}
}

// Err returns the first failure, which go-git may report only as the
// cancelled transfer it caused.
func (p *packReceiver) Err() error { return p.err }

// Close waits for the index of the received pack and moves both into the
// store; on any failure the temporary file is removed and the store is as
// it was.
func (p *packReceiver) Close() error {
	name := p.file.Name()
	defer os.Remove(name)
	err := p.err
	if err == nil {
		err = p.ctx.Err()
	}
	if err == nil && p.n > 0 {
		err = p.file.Sync()
	}
	if err == nil && p.n > 0 {
		p.grow.finish()
	} else {
		p.grow.stop()
	}
	<-p.indexed
	p.stopIndex()
	if cerr := p.file.Close(); err == nil {
		err = cerr
	}
	if err == nil && p.n > 0 {
		switch {
		case !bytes.Equal(p.sum.Sum(nil), p.tail):
			err = fmt.Errorf("%w: its checksum does not match (truncated?)", errBadPack)
		case p.idxErr != nil:
			err = p.idxErr
		default:
			err = installIndexed(name, p.dir, p.idx, p.idxSum)
		}
	}
	if err == nil {
		p.spool = p.keep.finish()
	} else {
		p.keep.discard()
	}
	if p.err == nil {
		p.err = err
	}
	return err
}

// growingPack is a pack file being written, read by its indexer as it
// grows: a read waits for the bytes it asks for, until the writer is done
// (the end of the pack) or stopped.
type growingPack struct {
	f       *os.File
	mu      sync.Mutex
	cond    sync.Cond
	n       int64 // bytes written
	done    bool  // the writer is done: n is the pack's size
	stopped bool  // the reader gives up
}

func newGrowingPack(f *os.File) *growingPack {
	g := &growingPack{f: f}
	g.cond.L = &g.mu
	return g
}

// errStopped is a growingPack's read once it was stopped.
var errStopped = errors.New("the pack's transfer stopped")

func (g *growingPack) ReadAt(p []byte, off int64) (int, error) {
	g.mu.Lock()
	for !g.done && !g.stopped && g.n < off+int64(len(p)) {
		g.cond.Wait()
	}
	n, stopped := g.n, g.stopped
	g.mu.Unlock()
	if stopped {
		return 0, errStopped
	}
	if off >= n {
		return 0, io.EOF
	}
	want := p[:min(int64(len(p)), n-off)]
	k, err := g.f.ReadAt(want, off)
	if err == nil && k < len(p) {
		err = io.EOF
	}
	return k, err
}

// received is the number of bytes written so far.
func (g *growingPack) received() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// size waits for the writer and returns the pack's size.
func (g *growingPack) size() (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.done && !g.stopped {
		g.cond.Wait()
	}
	if g.stopped {
		return 0, errStopped
	}
	return g.n, nil
}

func (g *growingPack) grew(k int64) { g.update(func() { g.n += k }) }
func (g *growingPack) finish()      { g.update(func() { g.done = true }) }
func (g *growingPack) stop()        { g.update(func() { g.stopped = true }) }

func (g *growingPack) update(f func()) {
	g.mu.Lock()
	f()
	g.mu.Unlock()
	g.cond.Broadcast()
}

// installPack indexes the pack at name and moves it and its index into
// dir as pack-<checksum>.pack and .idx. The index goes first: go-git
// lists packs by their .pack file and cannot read a store where one has
// no index. The objects indexing inflates go to sw too (nil keeps none).
func installPack(ctx context.Context, name, dir string, sw *spoolWriter) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	idx, sum, err := indexPackInto(ctx, f, info.Size(), dir, inMemoryObject, deltaBaseBudget, sw)
	// Closed before the rename: Windows refuses to rename a file open
	// without FILE_SHARE_DELETE, as os.Open opens it.
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return installIndexed(name, dir, idx, sum)
}

// installIndexed moves the pack at name, of checksum sum, and its index
// idx into dir; see installPack.
func installIndexed(name, dir string, idx *idxfile.MemoryIndex, sum plumbing.Hash) error {
	base := filepath.Join(dir, "pack-"+sum.String())
	if _, err := os.Stat(base + ".pack"); err == nil {
		return nil // the same pack is already here
	}
	tmp, err := os.CreateTemp(dir, "tmp_idx_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := idxfile.NewEncoder(tmp).Encode(idx); err != nil {
		tmp.Close()
		return fmt.Errorf("write pack index: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// An index without its pack is one a stop between the two renames
	// below left, of no installed pack. It goes first: it is read-only,
	// and Windows refuses to rename over a read-only file
	// (ERROR_ACCESS_DENIED), which would fail every later fetch of this
	// pack.
	if err := os.Remove(base + ".idx"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, mv := range [][2]string{{tmp.Name(), base + ".idx"}, {name, base + ".pack"}} {
		if err := os.Chmod(mv[0], 0o444); err != nil {
			return err
		}
		if err := os.Rename(mv[0], mv[1]); err != nil {
			return err
		}
	}
	return atomicfile.SyncDir(dir)
}

// packObject is one entry of a pack being indexed.
type packObject struct {
	offset int64
	crc    uint32
	kind   plumbing.ObjectType // as stored: a delta kind or the object's type
	length int64               // inflated length of what is stored
	// baseOffset and baseHash name the base of a delta.
	baseOffset int64
	baseHash   plumbing.Hash
	base       int // index of the base once resolved
	depth      int // deltas between this object and its stored base
	// typ, size and hash are the object's own, known once resolved.
	typ     plumbing.ObjectType
	size    int64
	srcSize int64 // a delta's declared base size
	// chainBase is the largest base along a delta's chain: a reader that
	// refuses large bases (packedObjects.maxBase) refuses it from the
	// spool too.
	chainBase int64
	hash      plumbing.Hash
	resolved  bool
}

// packIndexer computes the index of a pack: the hash, offset and CRC of
// each object, with bounded memory whatever the pack holds.
type packIndexer struct {
	ctx context.Context
	// inMemory is the largest object held in memory; larger ones stream.
	inMemory int64
	pack     io.ReaderAt
	size     int64
	objects  []packObject
	// children lists the deltas on each object, by offset and by hash.
	byOffset map[int64][]int
	byHash   map[plumbing.Hash][]int
	cache    byteCache[int64]
	// spooled holds the content of large bases, in spoolDir.
	spooled   map[int64]*os.File
	spoolDir  string
	spoolUsed int64
	// keep receives every object as it is hashed (see objectSpools).
	keep *spoolWriter
	// grow, when not nil, is the pack being written: size is known once
	// its objects are read.
	grow *growingPack
}

// indexPack indexes the pack in r and returns its index and checksum.
// Bases too large for memory are spooled to temporary files in spoolDir.
func indexPack(ctx context.Context, r io.ReaderAt, size int64, spoolDir string) (*idxfile.MemoryIndex, plumbing.Hash, error) {
	return indexPackWithin(ctx, r, size, spoolDir, inMemoryObject, deltaBaseBudget)
}

// indexPackWithin is indexPack holding objects of up to inMemory bytes in
// memory and up to cache bytes of delta bases.
func indexPackWithin(ctx context.Context, r io.ReaderAt, size int64, spoolDir string, inMemory int64, cache int) (*idxfile.MemoryIndex, plumbing.Hash, error) {
	return indexPackInto(ctx, r, size, spoolDir, inMemory, cache, nil)
}

// indexPackInto is indexPackWithin writing every object it hashes to keep
// too (nil keeps none).
func indexPackInto(ctx context.Context, r io.ReaderAt, size int64, spoolDir string, inMemory int64, cache int, keep *spoolWriter) (*idxfile.MemoryIndex, plumbing.Hash, error) {
	return indexPackOf(ctx, r, size, nil, spoolDir, inMemory, cache, keep)
}

// indexPackGrowing indexes the pack g as it is written, keeping what it
// inflates in keep (nil keeps none).
func indexPackGrowing(ctx context.Context, g *growingPack, spoolDir string, keep *spoolWriter) (*idxfile.MemoryIndex, plumbing.Hash, error) {
	return indexPackOf(ctx, g, -1, g, spoolDir, inMemoryObject, deltaBaseBudget, keep)
}

// indexPackOf indexes the pack in r, of size bytes, or of the size grow
// says once written when grow is not nil.
func indexPackOf(ctx context.Context, r io.ReaderAt, size int64, grow *growingPack, spoolDir string, inMemory int64, cache int, keep *spoolWriter) (*idxfile.MemoryIndex, plumbing.Hash, error) {
	ix := &packIndexer{
		grow:     grow,
		keep:     keep,
		ctx:      ctx,
		spoolDir: spoolDir,
		spooled:  map[int64]*os.File{},
		inMemory: inMemory,
		pack:     ctxReaderAt{ctx: ctx, r: r},
		size:     size,
		byOffset: map[int64][]int{},
		byHash:   map[plumbing.Hash][]int{},
		cache:    byteCache[int64]{max: cache},
	}
	sum, err := ix.scan()
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("%w: %w", errBadPack, err)
	}
	if err := ix.resolveDeltas(); err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("%w: %w", errBadPack, err)
	}
	w := new(idxfile.Writer)
	for i := range ix.objects {
		o := &ix.objects[i]
		w.Add(o.hash, uint64(o.offset), o.crc)
	}
	if err := w.OnFooter(sum); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	idx, err := w.Index()
	return idx, sum, err
}

// scan reads the pack once, in order: each whole object is hashed as it
// streams; a delta's header is read for its sizes and its base noted.
// Objects inflate with klauspost's zlib, a third faster than the
// standard library's that go-git's scanner uses, read from one buffered
// stream over the pack: no seek and no read of its own per object.
func (ix *packIndexer) scan() (plumbing.Hash, error) {
	count, err := ix.packHeader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	end := ix.size - sha1.Size
	if ix.grow != nil {
		end = math.MaxInt64 // read on to the checksum, whose place is not yet known
	}
	ps := newPackStream(ix.pack, packHeaderSize, end)
	zr, err := zlib.NewReader(bytes.NewReader(emptyZlib))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer zr.Close()
	buf := make([]byte, 32<<10)
	at := map[int64]int{}
	// Every object takes more than a few bytes: a count beyond that is
	// not preallocated.
	preallocate := ix.size / 8
	if ix.grow != nil {
		preallocate = 1 << 16
	}
	ix.objects = make([]packObject, 0, min(int64(count), preallocate))
	for i := uint32(0); i < count; i++ {
		if err := ix.ctx.Err(); err != nil {
			return plumbing.ZeroHash, err
		}
		offset := ps.begin()
		h, err := readHeader(ps.br, offset)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		o := packObject{offset: offset, kind: h.kind, length: h.length}
		var w io.Writer
		var hasher plumbing.Hasher
		var head prefix
		switch h.kind {
		case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
			if err := checkMeta(h.kind, h.length, h.length); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("object at %d: %w", offset, err)
			}
			hasher = plumbing.NewHasher(h.kind, h.length)
			w = hasher
			if k := ix.keep.begin(h.length); k != nil {
				w = io.MultiWriter(hasher, k)
			}
			o.typ, o.size = h.kind, h.length
		case plumbing.OFSDeltaObject:
			b, ok := at[h.base]
			if !ok {
				return plumbing.ZeroHash, fmt.Errorf("delta at %d names no object as its base", offset)
			}
			o.baseOffset = h.base
			o.depth = ix.objects[b].depth + 1
			w = &head
		case plumbing.REFDeltaObject:
			o.baseOffset = -1
			o.baseHash = h.ref
			w = &head
		}
		if o.depth > maxDeltaChain {
			return plumbing.ZeroHash, fmt.Errorf("delta chain longer than %d", maxDeltaChain)
		}
		if err := zr.(zlib.Resetter).Reset(ps.br, nil); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("object at %d: %w", offset, err)
		}
		// Read to the stream's end, which checks its checksum and leaves
		// the pack stream at the next object; one byte more than the
		// header says is enough to know it lies.
		n, err := io.CopyBuffer(w, io.LimitReader(zr, h.length+1), buf)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("object at %d: %w", offset, err)
		}
		if n != h.length {
			return plumbing.ZeroHash, fmt.Errorf("object at %d is %d bytes or more, its header says %d", offset, n, h.length)
		}
		o.crc = ps.end()
		if o.kind.IsDelta() {
			src, target, ok := head.deltaSizes()
			if !ok {
				return plumbing.ZeroHash, fmt.Errorf("delta at %d has no valid header", offset)
			}
			o.srcSize, o.size = src, target
		} else {
			o.hash = hasher.Sum()
			o.resolved = true
			ix.keep.end(o.hash, o.typ, o.size, 0)
		}
		at[o.offset] = len(ix.objects)
		ix.objects = append(ix.objects, o)
	}
	if ix.grow != nil {
		if ix.size, err = ix.grow.size(); err != nil {
			return plumbing.ZeroHash, err
		}
		if ix.size < packHeaderSize+sha1.Size {
			return plumbing.ZeroHash, fmt.Errorf("a pack of %d bytes is too short", ix.size)
		}
	}
	if end := ps.begin(); end != ix.size-sha1.Size {
		return plumbing.ZeroHash, fmt.Errorf("the pack's %d objects end at %d, not at its checksum (%d)", count, end, ix.size-sha1.Size)
	}
	var sum plumbing.Hash
	if _, err := ix.pack.ReadAt(sum[:], ix.size-sha1.Size); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read the pack's checksum: %w", err)
	}
	for i := range ix.objects {
		o := &ix.objects[i]
		switch o.kind {
		case plumbing.OFSDeltaObject:
			ix.byOffset[o.baseOffset] = append(ix.byOffset[o.baseOffset], i)
		case plumbing.REFDeltaObject:
			ix.byHash[o.baseHash] = append(ix.byHash[o.baseHash], i)
		}
	}
	return sum, nil
}

// packHeaderSize is the size of a pack's header: "PACK", a version and
// the number of objects.
const packHeaderSize = 12

// emptyZlib is a zlib stream of nothing, to make a reader to reset.
var emptyZlib = []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}

// packHeader reads the pack's header and returns its number of objects.
func (ix *packIndexer) packHeader() (uint32, error) {
	if ix.grow == nil && ix.size < packHeaderSize+sha1.Size {
		return 0, fmt.Errorf("a pack of %d bytes is too short", ix.size)
	}
	var b [packHeaderSize]byte
	if _, err := ix.pack.ReadAt(b[:], 0); err != nil {
		return 0, fmt.Errorf("read the pack's header: %w", err)
	}
	if string(b[:4]) != "PACK" {
		return 0, errors.New("not a pack: it does not start with PACK")
	}
	if v := binary.BigEndian.Uint32(b[4:8]); v != 2 && v != 3 {
		return 0, fmt.Errorf("pack version %d is not supported", v)
	}
	return binary.BigEndian.Uint32(b[8:12]), nil
}

// packStream reads a pack's objects in order through one buffer, and
// knows the offset of the next byte and the CRC-32 of each object's
// bytes, which the index records.
//
// The buffer is refilled only once it is empty (the inflater reads a
// byte at a time, and whole reads are served from the buffer first), so
// every byte of the chunk read before the current one has been consumed:
// last, a copy of the latest chunk, is all a CRC still needs.
type packStream struct {
	br    *bufio.Reader
	src   io.ReaderAt
	pos   int64 // the offset of the next byte src gives the buffer
	limit int64 // where the objects end
	// last is a copy of the latest chunk, read at lastAt; crc covers the
	// current object's bytes before lastAt.
	last   []byte
	lastAt int64
	start  int64 // the current object's offset
	crc    uint32
}

func newPackStream(src io.ReaderAt, from, end int64) *packStream {
	ps := &packStream{src: src, pos: from, limit: end, lastAt: from, start: from}
	ps.br = bufio.NewReaderSize(ps, 64<<10)
	return ps
}

// Read is what the buffer reads the pack with.
func (ps *packStream) Read(p []byte) (int, error) {
	if ps.pos >= ps.limit {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), ps.limit-ps.pos)]
	n, err := ps.src.ReadAt(p, ps.pos)
	if n > 0 {
		ps.fold(len(ps.last))
		ps.last = append(ps.last[:0], p[:n]...)
		ps.lastAt = ps.pos
		ps.pos += int64(n)
		err = nil
	}
	if n == 0 && err == nil {
		err = io.ErrNoProgress
	}
	return n, err
}

// fold adds last's bytes of the current object, up to last[to], to crc.
func (ps *packStream) fold(to int) {
	from := max(ps.start-ps.lastAt, 0)
	if from < int64(to) {
		ps.crc = crc32.Update(ps.crc, crc32.IEEETable, ps.last[from:to])
	}
}

// offset is the offset of the next byte to consume.
func (ps *packStream) offset() int64 { return ps.pos - int64(ps.br.Buffered()) }

// begin starts an object at the next byte, and returns its offset.
func (ps *packStream) begin() int64 {
	ps.start, ps.crc = ps.offset(), 0
	return ps.start
}

// end returns the CRC-32 of the object's bytes up to the next byte.
func (ps *packStream) end() uint32 {
	ps.fold(int(ps.offset() - ps.lastAt))
	crc := ps.crc
	ps.start, ps.crc = ps.offset(), 0
	return crc
}

// resolveDeltas hashes every delta, walking from each whole object down
// the deltas built on it, so a base is at hand for its deltas.
func (ix *packIndexer) resolveDeltas() error {
	defer ix.releaseAll()
	for i := range ix.objects {
		if !ix.objects[i].kind.IsDelta() {
			if err := ix.resolveChildren(i, 0); err != nil {
				return err
			}
		}
	}
	for i := range ix.objects {
		if !ix.objects[i].resolved {
			// A thin pack's base would be in the store, but go-git never
			// asks for thin packs; anything else is a broken pack.
			return fmt.Errorf("the base of the delta at %d is not in the pack", ix.objects[i].offset)
		}
	}
	return nil
}

func (ix *packIndexer) children(i int) []int {
	o := &ix.objects[i]
	kids := ix.byOffset[o.offset]
	if more := ix.byHash[o.hash]; len(more) > 0 {
		kids = append(kids[:len(kids):len(kids)], more...)
	}
	return kids
}

// hasChildren reports whether a delta is built on object i.
func (ix *packIndexer) hasChildren(i int) bool {
	o := &ix.objects[i]
	return len(ix.byOffset[o.offset]) > 0 || (o.resolved && len(ix.byHash[o.hash]) > 0)
}

// resolveChildren resolves the deltas built on object i, depth first. The
// content of i is released before its last delta is entered, so a chain
// of deltas holds two objects at a time, not the whole chain.
func (ix *packIndexer) resolveChildren(i, depth int) error {
	if depth > maxDeltaChain {
		return fmt.Errorf("delta chain longer than %d", maxDeltaChain)
	}
	kids := ix.children(i)
	for k, c := range kids {
		o := &ix.objects[c]
		if o.resolved {
			continue // a second copy of a base already resolved it
		}
		if err := ix.ctx.Err(); err != nil {
			return err
		}
		base := &ix.objects[i]
		if o.srcSize != base.size {
			return fmt.Errorf("delta at %d is for a base of %d bytes, not %d", o.offset, o.srcSize, base.size)
		}
		o.base, o.typ = i, base.typ
		o.chainBase = max(base.size, base.chainBase)
		if err := checkMeta(o.typ, o.size, o.length); err != nil {
			return fmt.Errorf("delta at %d: %w", o.offset, err)
		}
		h := plumbing.NewHasher(o.typ, o.size)
		var w io.Writer = h
		if k := ix.keep.begin(o.size); k != nil {
			w = io.MultiWriter(h, k)
		}
		if err := ix.produce(c, w, ix.hasChildren(c)); err != nil {
			return fmt.Errorf("delta at %d: %w", o.offset, err)
		}
		o.hash, o.resolved = h.Sum(), true
		ix.keep.end(o.hash, o.typ, o.size, o.chainBase)
		if k == len(kids)-1 {
			ix.release(i)
		}
		if err := ix.resolveChildren(c, depth+1); err != nil {
			return err
		}
	}
	ix.release(i)
	return nil
}

// checkMeta refuses a commit, tree or tag over maxMetaObject, or stored
// as a delta much larger than itself.
func checkMeta(typ plumbing.ObjectType, size, stored int64) error {
	if typ == plumbing.BlobObject || (size <= maxMetaObject && stored <= 2*maxMetaObject) {
		return nil
	}
	return fmt.Errorf("a %s of %d bytes is over the limit of %d", typ, max(size, stored), maxMetaObject)
}

// produce writes the content of object i to w, and keeps it as a base
// when keep is set.
func (ix *packIndexer) produce(i int, w io.Writer, keep bool) error {
	o := &ix.objects[i]
	var kept []byte
	var spool *os.File
	if keep {
		if o.size <= ix.inMemory {
			kept = make([]byte, 0, o.size)
			w = io.MultiWriter(w, (*appender)(&kept))
		} else {
			var err error
			if spool, err = ix.spool(o.size); err != nil {
				return err
			}
			w = io.MultiWriter(w, spool)
		}
	}
	err := ix.write(i, w)
	if err != nil {
		if spool != nil {
			ix.unspool(spool, o.size)
		}
		return err
	}
	switch {
	case spool != nil:
		ix.spooled[o.offset] = spool
	case keep:
		ix.cache.put(o.offset, kept)
	}
	return nil
}

// write writes the content of object i to w: inflated from the pack, or
// rebuilt from its base and its delta.
func (ix *packIndexer) write(i int, w io.Writer) error {
	o := &ix.objects[i]
	stored := ix.stored(o)
	defer stored.Close()
	if !o.kind.IsDelta() {
		n, err := io.Copy(w, stored)
		if err == nil && n != o.size {
			err = fmt.Errorf("object at %d is %d bytes, its header says %d", o.offset, n, o.size)
		}
		return err
	}
	base, err := ix.content(o.base)
	if err != nil {
		return err
	}
	return applyDelta(w, base, ix.objects[o.base].size, stored, o.size)
}

// content returns the content of object i for random access: from the
// cache, from its spool file, or rebuilt.
func (ix *packIndexer) content(i int) (io.ReaderAt, error) {
	o := &ix.objects[i]
	if b, ok := ix.cache.get(o.offset); ok {
		return bytes.NewReader(b), nil
	}
	if f, ok := ix.spooled[o.offset]; ok {
		return f, nil
	}
	if err := ix.produce(i, io.Discard, true); err != nil {
		return nil, err
	}
	if f, ok := ix.spooled[o.offset]; ok {
		return f, nil
	}
	b, ok := ix.cache.get(o.offset)
	if !ok {
		// Larger than the whole cache: keep it for this one use.
		var buf bytes.Buffer
		if err := ix.write(i, &buf); err != nil {
			return nil, err
		}
		b = buf.Bytes()
	}
	return bytes.NewReader(b), nil
}

// spool returns a temporary file for an object too large for memory.
func (ix *packIndexer) spool(size int64) (*os.File, error) {
	if ix.spoolUsed+size > maxSpool {
		return nil, fmt.Errorf("indexing the pack would take more than %d bytes of disk", int64(maxSpool))
	}
	f, err := os.CreateTemp(ix.spoolDir, "tmp_spool_")
	if err != nil {
		return nil, err
	}
	ix.spoolUsed += size
	return f, nil
}

func (ix *packIndexer) unspool(f *os.File, size int64) {
	f.Close()
	os.Remove(f.Name())
	ix.spoolUsed -= size
}

// release forgets the content of object i.
func (ix *packIndexer) release(i int) {
	o := &ix.objects[i]
	ix.cache.drop(o.offset)
	if f, ok := ix.spooled[o.offset]; ok {
		delete(ix.spooled, o.offset)
		ix.unspool(f, o.size)
	}
}

func (ix *packIndexer) releaseAll() {
	for off, f := range ix.spooled {
		delete(ix.spooled, off)
		f.Close()
		os.Remove(f.Name())
	}
	ix.spoolUsed = 0
}

// stored streams what the pack holds for o: the object, or its delta.
func (ix *packIndexer) stored(o *packObject) io.ReadCloser {
	var buf [maxHeader]byte
	n, err := ix.pack.ReadAt(buf[:], o.offset)
	if n == 0 {
		return errReader{fmt.Errorf("read the object at %d: %w", o.offset, err)}
	}
	r := bytes.NewReader(buf[:n])
	if _, err := readHeader(r, o.offset); err != nil {
		return errReader{err}
	}
	data := o.offset + int64(n-r.Len())
	rc, err := inflateAt(ix.pack, ix.size, data, o.length)
	if err != nil {
		return errReader{err}
	}
	return rc
}

// applyDelta writes to w the object that the git delta read from d makes
// of base: copies of ranges of the base and literal inserts, as in git's
// patch-delta.c. The target is streamed, so only the base needs random
// access.
func applyDelta(w io.Writer, base io.ReaderAt, baseSize int64, d io.Reader, size int64) error {
	r := bufio.NewReader(d)
	src, err := readVarint(r)
	if err != nil {
		return err
	}
	target, err := readVarint(r)
	if err != nil {
		return err
	}
	if src != baseSize || target != size {
		return errInvalidDelta
	}
	buf := make([]byte, 32<<10)
	for written := int64(0); written < size; {
		cmd, err := r.ReadByte()
		if err != nil {
			return errInvalidDelta
		}
		var n int64
		switch {
		case cmd&0x80 != 0:
			var off int64
			for bit := 0; bit < 7; bit++ {
				if cmd&(1<<bit) == 0 {
					continue
				}
				b, err := r.ReadByte()
				if err != nil {
					return errInvalidDelta
				}
				if bit < 4 {
					off |= int64(b) << (8 * bit)
				} else {
					n |= int64(b) << (8 * (bit - 4))
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > baseSize || written+n > size {
				return errInvalidDelta
			}
			if _, err := io.CopyBuffer(w, io.NewSectionReader(base, off, n), buf); err != nil {
				return err
			}
		case cmd != 0:
			n = int64(cmd)
			if written+n > size {
				return errInvalidDelta
			}
			if k, err := io.CopyN(w, r, n); err != nil || k != n {
				return errInvalidDelta
			}
		default:
			return errInvalidDelta // reserved
		}
		written += n
	}
	// The delta ends with the target; reading on also checks the
	// stream's checksum.
	if _, err := r.ReadByte(); err != io.EOF {
		return errInvalidDelta
	}
	return nil
}

var errInvalidDelta = errors.New("invalid delta")

func readVarint(r io.ByteReader) (int64, error) {
	var v int64
	for shift := 0; shift < 63; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, errInvalidDelta
		}
		v |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errInvalidDelta
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
func (e errReader) Close() error             { return nil }

// appender appends what is written to it to a byte slice.
type appender []byte

func (a *appender) Write(b []byte) (int, error) {
	*a = append(*a, b...)
	return len(b), nil
}

// ReadFrom reads r to its end into a's spare room: io.Copy would
// allocate 32 KiB for every object, where most trees are a few hundred
// bytes (a 1% sync reads a thousand of them). An object that fills the
// room exactly is not grown to find its end.
func (a *appender) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	var probe [64]byte
	for {
		var n int
		var err error
		if len(*a) < cap(*a) {
			n, err = r.Read((*a)[len(*a):cap(*a)])
			*a = (*a)[:len(*a)+n]
		} else {
			n, err = r.Read(probe[:])
			*a = append(*a, probe[:n]...)
		}
		total += int64(n)
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// prefix keeps the first bytes written to it: a delta's header.
type prefix struct {
	b [2 * 10]byte
	n int
}

func (p *prefix) Write(b []byte) (int, error) {
	p.n += copy(p.b[p.n:], b)
	return len(b), nil
}

// deltaSizes decodes the base and target sizes that start a delta.
func (p *prefix) deltaSizes() (src, target int64, ok bool) {
	b := p.b[:p.n]
	src, b, ok = leb128(b)
	if !ok {
		return 0, 0, false
	}
	target, _, ok = leb128(b)
	return src, target, ok
}

func leb128(b []byte) (int64, []byte, bool) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if v > 1<<62 {
				return 0, nil, false
			}
			return int64(v), b[i+1:], true
		}
	}
	return 0, nil, false
}

// ctxReaderAt stops reading once ctx is done, so indexing a hostile pack
// ends with the fetch's timeout.
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// byteCache keeps recently used delta bases up to a byte budget.
type byteCache[K comparable] struct {
	mu      sync.Mutex
	max     int
	used    int
	order   list.List // front is the most recently used
	entries map[K]*list.Element
}

type cached[K comparable] struct {
	key K
	b   []byte
}

func (c *byteCache[K]) get(key K) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached[K]).b, true
}

func (c *byteCache[K]) put(key K, b []byte) {
	if len(b) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[K]*list.Element{}
	}
	if _, ok := c.entries[key]; ok {
		return
	}
	c.entries[key] = c.order.PushFront(&cached[K]{key: key, b: b})
	c.used += len(b)
	for c.used > c.max {
		c.remove(c.order.Back())
	}
}

func (c *byteCache[K]) drop(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.remove(e)
	}
}

func (c *byteCache[K]) remove(e *list.Element) {
	v := c.order.Remove(e).(*cached[K])
	delete(c.entries, v.key)
	c.used -= len(v.b)
}
