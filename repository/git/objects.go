package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"
)

// packedObjects reads blobs straight from a store's packs. go-git reads a
// packed delta's whole data to learn its size, and loads a delta's whole
// base to apply it: a 10-byte blob made from a 1 GiB base cost 1 GiB.
// Here a size comes from the headers alone, a whole object streams from
// the pack, and a delta's base is held in memory only when it is small,
// else spooled to a temporary file.
//
// It is safe for concurrent use. Each pack is opened once, at its first
// read, and read with pread from then on (one descriptor shared by every
// read): opening the pack for every object was 60,000 opens in a sync of
// 2,000 skills. Close releases the descriptors; a later read opens the
// pack again.
type packedObjects struct {
	dir   string // objects/pack: the packs, and spooled bases
	packs []*packIndex
	cache byteCache[packedAt]
	// stats keeps the headers read, by place.
	statMu sync.Mutex
	stats  map[packedAt]storedObject
	// inMemory is the largest base held in memory; streamAbove the size
	// over which a delta's target is streamed rather than built first.
	inMemory, streamAbove int64
	// maxBase refuses to rebuild a delta from a larger base, which git
	// never makes for a small file: a 10-byte blob made from a 1 GiB base
	// would cost 1 GiB of disk to read. 0 means no limit.
	maxBase int64
	// spools, when not nil, hold objects already inflated (see
	// objectSpools), read before the packs.
	spools *objectSpools
	// headers keeps the blocks headers were last read from.
	headers headerCache
}

type packIndex struct {
	path string
	size int64
	idx  *packIdx

	mu   sync.Mutex
	file *os.File // nil until the first read, and after Close
}

// open returns the pack's open file, opening it at the first call.
func (pi *packIndex) open() (*os.File, error) {
	pi.mu.Lock()
	defer pi.mu.Unlock()
	if pi.file == nil {
		f, err := os.Open(pi.path)
		if err != nil {
			return nil, err
		}
		pi.file = f
	}
	return pi.file, nil
}

// objectHeader is the header of what a pack holds at one offset.
type objectHeader struct {
	kind   plumbing.ObjectType
	length int64 // inflated length of what is stored
	// base is an offset delta's base; ref a reference delta's.
	base int64
	ref  plumbing.Hash
	data int64 // where the deflated data starts
}

// maxHeader is the longest object header: a type and a 64-bit size,
// then a delta's base offset or hash.
const maxHeader = 10 + 10 + len(plumbing.Hash{})

// header reads the header of the object at offset, with one pread at
// most (a scanner per object cost a buffer and a dozen reads), none when
// headers keeps its block.
func (pi *packIndex) header(headers *headerCache, offset int64) (objectHeader, error) {
	f, err := pi.open()
	if err != nil {
		return objectHeader{}, err
	}
	if offset < 0 || offset >= pi.size {
		return objectHeader{}, fmt.Errorf("object offset %d outside the pack", offset)
	}
	var buf [maxHeader]byte
	n, err := headers.read(pi, f, buf[:], offset)
	if err != nil {
		return objectHeader{}, err
	}
	r := bytes.NewReader(buf[:n])
	h, err := readHeader(r, offset)
	h.data = offset + int64(n-r.Len())
	return h, err
}

// readHeader reads the header of the object at offset from r, up to its
// deflated data; data is left for the caller to set.
func readHeader(r io.ByteReader, offset int64) (objectHeader, error) {
	bad := malformedHeader(offset)
	c, err := r.ReadByte()
	if err != nil {
		return objectHeader{}, bad
	}
	h := objectHeader{kind: plumbing.ObjectType((c >> 4) & 7), length: int64(c & 0x0f)}
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return h, bad
		}
		if c, err = r.ReadByte(); err != nil {
			return h, bad
		}
		h.length |= int64(c&0x7f) << shift
	}
	switch h.kind {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		if c, err = r.ReadByte(); err != nil {
			return h, bad
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if rel > (1 << 55) {
				return h, bad
			}
			if c, err = r.ReadByte(); err != nil {
				return h, bad
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if rel <= 0 || rel > offset {
			return h, bad
		}
		h.base = offset - rel
	case plumbing.REFDeltaObject:
		for i := range h.ref {
			if h.ref[i], err = r.ReadByte(); err != nil {
				return h, bad
			}
		}
	default:
		return h, fmt.Errorf("object at %d has unknown type %d", offset, h.kind)
	}
	return h, nil
}

// inflate streams the length bytes deflated at data, and fails on a
// stream that holds more or fewer. klauspost's inflate is a third faster
// than the standard library's, and reading a blob is mostly inflating it.
// Its deflated bytes come from the blocks headers keeps where they can.
func (pi *packIndex) inflate(headers *headerCache, data, length int64) (io.ReadCloser, error) {
	f, err := pi.open()
	if err != nil {
		return nil, err
	}
	if data < 0 || data > pi.size {
		return nil, fmt.Errorf("object data at %d outside the pack", data)
	}
	return inflateFrom(&packReader{headers, pi, f, data, pi.size}, data, length)
}

// inflateAt streams the length bytes deflated at data in r, which holds
// size bytes, and fails on a stream that holds more or fewer.
func inflateAt(r io.ReaderAt, size, data, length int64) (io.ReadCloser, error) {
	if data < 0 || data > size {
		return nil, fmt.Errorf("object data at %d outside the pack", data)
	}
	return inflateFrom(io.NewSectionReader(r, data, size-data), data, length)
}

// inflateFrom streams the length bytes deflated in src, which starts at
// data (for errors), and fails on a stream that holds more or fewer.
func inflateFrom(src io.Reader, data, length int64) (io.ReadCloser, error) {
	in := inflaters.Get().(*inflater)
	in.buf.Reset(src)
	var err error
	if in.zr == nil {
		in.zr, err = zlib.NewReader(&in.buf)
	} else {
		err = in.zr.(zlib.Resetter).Reset(&in.buf, nil)
	}
	if err != nil {
		inflaters.Put(in)
		return nil, fmt.Errorf("inflate object data at %d: %w", data, err)
	}
	return &inflated{in: in, left: length}, nil
}

// inflater is a pooled zlib reader and its buffer.
type inflater struct {
	buf bufio.Reader
	zr  io.ReadCloser
}

var inflaters = sync.Pool{New: func() any {
	return &inflater{buf: *bufio.NewReaderSize(nil, 16<<10)}
}}

// inflated is one object's data being inflated.
type inflated struct {
	in   *inflater // nil once closed
	left int64
}

// errInflatedSize is an object whose data inflates to another length
// than its header says.
var errInflatedSize = errors.New("object data inflates to another size than its header says")

func (r *inflated) Read(p []byte) (int, error) {
	if r.in == nil {
		return 0, os.ErrClosed
	}
	if r.left == 0 {
		// At the end, the stream must end too.
		var one [1]byte
		if n, err := r.in.zr.Read(one[:]); n > 0 {
			return 0, errInflatedSize
		} else if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.in.zr.Read(p)
	r.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if r.left > 0 {
			return n, fmt.Errorf("%w: %d bytes short", errInflatedSize, r.left)
		}
		err = nil
	}
	return n, err
}

// Close gives the inflater back to the pool.
func (r *inflated) Close() error {
	if r.in != nil {
		r.in.buf.Reset(nil)
		inflaters.Put(r.in)
		r.in = nil
	}
	return nil
}

// Close closes the packs' files; a later read opens them again.
func (p *packedObjects) Close() error {
	var first error
	for _, pi := range p.packs {
		pi.mu.Lock()
		if pi.file != nil {
			if err := pi.file.Close(); err != nil && first == nil {
				first = err
			}
			pi.file = nil
		}
		pi.mu.Unlock()
	}
	p.headers.drop()
	return first
}

// packedAt is the place of an object in a pack.
type packedAt struct {
	pack   *packIndex
	offset int64
}

// openPackedObjects reads the indexes of the packs in store.
func openPackedObjects(store string) (*packedObjects, error) {
	dir := filepath.Join(store, "objects", "pack")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	p := &packedObjects{dir: dir, cache: byteCache[packedAt]{max: deltaBaseBudget / 2}, inMemory: inMemoryObject, streamAbove: streamThreshold}
	for _, name := range packNames(entries) {
		pi, err := readPackIndex(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		p.packs = append(p.packs, pi)
	}
	return p, nil
}

// packNames returns the names of the pack files among entries.
func packNames(entries []os.DirEntry) []string {
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "pack-") && strings.HasSuffix(name, ".pack") {
			names = append(names, name)
		}
	}
	return names
}

// current reports whether the store still holds the packs p read, and no
// other: a pack's name is its content's hash.
func (p *packedObjects) current() (bool, error) {
	entries, err := os.ReadDir(p.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	names := packNames(entries)
	if len(names) != len(p.packs) {
		return false, nil
	}
	for i, name := range names {
		if filepath.Base(p.packs[i].path) != name {
			return false, nil
		}
	}
	return true, nil
}

func readPackIndex(pack string) (*packIndex, error) {
	info, err := os.Stat(pack)
	if err != nil {
		return nil, err
	}
	idx, err := readIdx(strings.TrimSuffix(pack, ".pack") + ".idx")
	if err != nil {
		return nil, fmt.Errorf("read index of %s: %w", filepath.Base(pack), err)
	}
	return &packIndex{path: pack, size: info.Size(), idx: idx}, nil
}

func (p *packedObjects) find(h plumbing.Hash) (packedAt, bool) {
	for _, pi := range p.packs {
		if off, err := pi.idx.FindOffset(h); err == nil {
			return packedAt{pi, off}, true
		}
	}
	return packedAt{}, false
}

// storedObject is what a pack holds at one offset.
type storedObject struct {
	kind   plumbing.ObjectType // a delta kind, or the object's own type
	length int64               // inflated length of what is stored
	base   packedAt            // a delta's base
	// size is the object's own size: length, or a delta's target size;
	// srcSize is a delta's declared base size.
	size, srcSize int64
	data          int64 // where its deflated data starts in the pack
}

// stat reads the header at at, and a delta's first bytes for its sizes.
func (p *packedObjects) stat(at packedAt) (storedObject, error) {
	p.statMu.Lock()
	o, ok := p.stats[at]
	p.statMu.Unlock()
	if ok {
		return o, nil
	}
	o, err := p.readStat(at)
	if err == nil {
		p.statMu.Lock()
		if p.stats == nil {
			p.stats = map[packedAt]storedObject{}
		}
		if len(p.stats) < maxStats {
			p.stats[at] = o
		}
		p.statMu.Unlock()
	}
	return o, err
}

// maxStats bounds the headers a packedObjects keeps: discovery stats a
// file for its size and the sync opens it next, and each was a read of
// the pack. Some 100 bytes each.
const maxStats = 200_000

func (p *packedObjects) readStat(at packedAt) (storedObject, error) {
	h, err := at.pack.header(&p.headers, at.offset)
	if err != nil {
		return storedObject{}, err
	}
	o := storedObject{kind: h.kind, length: h.length, size: h.length, data: h.data}
	switch h.kind {
	case plumbing.OFSDeltaObject:
		o.base = packedAt{at.pack, h.base}
	case plumbing.REFDeltaObject:
		base, ok := p.find(h.ref)
		if !ok {
			return o, fmt.Errorf("base %s of delta %d is not in the store", h.ref, at.offset)
		}
		o.base = base
	default:
		return o, nil
	}
	r, err := at.pack.inflate(&p.headers, h.data, h.length)
	if err != nil {
		return o, err
	}
	var head prefix
	_, err = io.CopyN(&head, r, int64(len(head.b)))
	r.Close()
	if err != nil && err != io.EOF {
		return o, err
	}
	src, target, ok := head.deltaSizes()
	if !ok {
		return o, fmt.Errorf("delta at %d has no valid header", at.offset)
	}
	o.srcSize, o.size = src, target
	return o, nil
}

// Size returns the size of object h from the pack headers, without
// inflating the object. It returns plumbing.ErrObjectNotFound for an
// object that is not in a pack.
func (p *packedObjects) Size(h plumbing.Hash) (int64, error) {
	if _, o, ok := p.spools.find(h); ok {
		return o.size, nil
	}
	at, ok := p.find(h)
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	o, err := p.stat(at)
	return o.size, err
}

// Open streams the content of object h; the caller checks its size first.
// It returns plumbing.ErrObjectNotFound for an object that is not in a
// pack.
func (p *packedObjects) Open(h plumbing.Hash) (io.ReadCloser, error) {
	r, _, err := p.OpenSized(h, 0)
	return r, err
}

// errOverLimit is OpenSized's error for a blob over its limit.
var errOverLimit = errors.New("over the limit")

// OpenSized streams the content of object h and returns its size, read
// from the headers once: a blob over limit (when above 0) is refused
// with errOverLimit and its size before any of it is inflated. It
// returns plumbing.ErrObjectNotFound for an object that is not in a pack.
func (p *packedObjects) OpenSized(h plumbing.Hash, limit int64) (io.ReadCloser, int64, error) {
	if f, o, ok := p.spools.find(h); ok && !p.overBase(o) {
		if limit > 0 && o.size > limit {
			return nil, o.size, errOverLimit
		}
		if o.typ != plumbing.BlobObject {
			return nil, 0, fmt.Errorf("object %s is a %s, not a blob", h, o.typ)
		}
		return f.open(o), o.size, nil
	}
	at, ok := p.find(h)
	if !ok {
		return nil, 0, plumbing.ErrObjectNotFound
	}
	o, err := p.stat(at)
	if err != nil {
		return nil, 0, err
	}
	if limit > 0 && o.size > limit {
		return nil, o.size, errOverLimit
	}
	r, err := p.open(h, at, o)
	return r, o.size, err
}

// overBase reports whether a spooled object was rebuilt from a base over
// maxBase: such an object is read from the pack, which refuses it, so a
// sync refuses it whether or not it follows the fetch in its process.
func (p *packedObjects) overBase(o spooledObject) bool {
	return p.maxBase > 0 && o.chainBase > p.maxBase
}

// open streams the blob h at at, of which stat read o.
func (p *packedObjects) open(h plumbing.Hash, at packedAt, o storedObject) (io.ReadCloser, error) {
	if typ, err := p.objectType(o); err != nil {
		return nil, err
	} else if typ != plumbing.BlobObject {
		return nil, fmt.Errorf("object %s is a %s, not a blob", h, typ)
	}
	if !o.kind.IsDelta() {
		return p.stored(at, o)
	}
	base, release, err := p.content(o.base, 1)
	if err != nil {
		return nil, err
	}
	delta, err := p.stored(at, o)
	if err != nil {
		release()
		return nil, err
	}
	if o.size <= p.streamAbove {
		defer release()
		defer delta.Close()
		// An appender fills the room made for the target and no more,
		// where a bytes.Buffer grew (a copy of twice the target) once
		// its room was under 512 bytes.
		b := make([]byte, 0, o.size)
		if err := applyDelta((*appender)(&b), base, o.srcSize, delta, o.size); err != nil {
			return nil, fmt.Errorf("object %s: %w", h, err)
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	// A large target streams: the delta is applied as it is read. The
	// base's temporary file is gone before the reader sees the end: a
	// reader that read to the end and closed the store leaves none
	// behind (it was removed after, some time after).
	pr, pw := io.Pipe()
	go func() {
		err := applyDelta(pw, base, o.srcSize, delta, o.size)
		delta.Close()
		release()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// objectType follows o's deltas down to the whole object they start from,
// whose type is theirs.
func (p *packedObjects) objectType(o storedObject) (plumbing.ObjectType, error) {
	for depth := 0; o.kind.IsDelta(); depth++ {
		if depth > maxDeltaChain {
			return 0, fmt.Errorf("delta chain longer than %d", maxDeltaChain)
		}
		var err error
		if o, err = p.stat(o.base); err != nil {
			return 0, err
		}
	}
	return o.kind, nil
}

// stored streams what the pack holds at at: an object or a delta.
// o is what stat read of it.
func (p *packedObjects) stored(at packedAt, o storedObject) (io.ReadCloser, error) {
	return at.pack.inflate(&p.headers, o.data, o.length)
}

// content returns the object at at for random access, and a function to
// call when done with it: from the cache or memory when it is small,
// else from a temporary file.
func (p *packedObjects) content(at packedAt, depth int) (io.ReaderAt, func(), error) {
	if depth > maxDeltaChain {
		return nil, nil, fmt.Errorf("delta chain longer than %d", maxDeltaChain)
	}
	if b, ok := p.cache.get(at); ok {
		return bytes.NewReader(b), func() {}, nil
	}
	o, err := p.stat(at)
	if err != nil {
		return nil, nil, err
	}
	if p.maxBase > 0 && o.size > p.maxBase {
		return nil, nil, fmt.Errorf("%w: made from a base of %d bytes, over the limit of %d", ErrTooLarge, o.size, p.maxBase)
	}
	write := func(w io.Writer) error {
		r, err := p.stored(at, o)
		if err != nil {
			return err
		}
		defer r.Close()
		if !o.kind.IsDelta() {
			n, err := io.Copy(w, r)
			if err == nil && n != o.size {
				err = fmt.Errorf("object at %d is %d bytes, its header says %d", at.offset, n, o.size)
			}
			return err
		}
		base, release, err := p.content(o.base, depth+1)
		if err != nil {
			return err
		}
		defer release()
		return applyDelta(w, base, o.srcSize, r, o.size)
	}
	if o.size <= p.inMemory {
		b := make([]byte, 0, o.size)
		if err := write((*appender)(&b)); err != nil {
			return nil, nil, err
		}
		p.cache.put(at, b)
		return bytes.NewReader(b), func() {}, nil
	}
	f, err := os.CreateTemp(p.dir, "tmp_spool_")
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		f.Close()
		os.Remove(f.Name())
	}
	if err := write(f); err != nil {
		release()
		return nil, nil, err
	}
	return f, release, nil
}

// malformedHeader is the error of an object header that cannot be read,
// at its offset in the pack. Its text is made only when it is read:
// readHeader formatted it ahead for every header, which was 2% of what a
// 1% sync's discovery cost.
type malformedHeader int64

func (m malformedHeader) Error() string {
	return fmt.Sprintf("object at %d has a malformed header", int64(m))
}
