package git

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// Indexing a fetched pack inflates every object in it to hash it, and the
// sync that follows the fetch inflated every blob a second time to write
// it: the cold sync of the medium benchmark corpus spent a third of its
// user time in inflate, half of it on that second pass. So the indexer
// also writes each object it inflates, whole, to an unlinked temporary
// file, the object spool, and a sync in the same process reads a spooled
// object with one pread instead of a header read, an inflater's reset and
// the inflate.
//
// An object's place in the spool is recorded under the hash its bytes
// hashed to on their way into the file, and only once the pack is indexed
// and installed: what the spool serves is checked by construction. It is
// bounded: an object over maxSpoolObject is not kept, nor any once the file
// would pass its limit (a multiple of the pack's size, at most
// maxObjectSpool); those are read from the pack, as before. The file is
// unlinked at once where the system allows it, so a crash leaves nothing
// (elsewhere it is a tmp_* file of objects/pack, which the next fetch
// removes), and its pages are dropped when it is closed: at the next
// download or when the source is closed.

const (
	// maxSpoolObject is the largest object kept in the spool.
	maxSpoolObject = 8 << 20
	// maxObjectSpool bounds a spool's file.
	maxObjectSpool = 1 << 30
	// spoolRatio and spoolSlack give a spool's limit for a pack of n
	// bytes: spoolRatio*n + spoolSlack (text inflates to 3 to 5 times its
	// packed size), so a small hostile pack of highly compressible blobs
	// cannot fill a disk.
	spoolRatio = 8
	spoolSlack = 64 << 20
)

// spoolLimit is the limit of the spool of a pack of n bytes.
func spoolLimit(n int64) int64 {
	if n > (maxObjectSpool-spoolSlack)/spoolRatio {
		return maxObjectSpool
	}
	return spoolRatio*n + spoolSlack
}

// spooledObject is the place of one object in a spool file.
type spooledObject struct {
	typ       plumbing.ObjectType
	off, size int64
	// chainBase is the largest base it was rebuilt from, 0 for an object
	// stored whole.
	chainBase int64
}

// spoolFile is a finished spool: its objects are never changed.
type spoolFile struct {
	f       *os.File
	name    string // removed at close when it could not be unlinked before
	objects map[plumbing.Hash]spooledObject
}

func (s *spoolFile) close() {
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}

// open streams a spooled object.
func (s *spoolFile) open(o spooledObject) io.ReadCloser {
	return io.NopCloser(io.NewSectionReader(s.f, o.off, o.size))
}

// read returns a spooled object whole.
func (s *spoolFile) read(o spooledObject) ([]byte, error) {
	b := make([]byte, o.size)
	if _, err := s.f.ReadAt(b, o.off); err != nil {
		return nil, fmt.Errorf("read the object spool: %w", err)
	}
	return b, nil
}

// objectSpools are the spools a source's last download left, shared by
// the packedObjects that read its store. Safe for concurrent use; a nil
// *objectSpools holds nothing.
type objectSpools struct {
	mu    sync.RWMutex
	files []*spoolFile
}

// find returns the spool holding h and its place there.
func (s *objectSpools) find(h plumbing.Hash) (*spoolFile, spooledObject, bool) {
	if s == nil {
		return nil, spooledObject{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.files {
		if o, ok := f.objects[h]; ok {
			return f, o, true
		}
	}
	return nil, spooledObject{}, false
}

// add keeps files for reading.
func (s *objectSpools) add(files ...*spoolFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = append(s.files, files...)
}

// Close closes every spool; a reader already streaming from one gets an
// error, later lookups find nothing and read from the packs.
func (s *objectSpools) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		f.close()
	}
	s.files = nil
}

// spoolWriter fills a spool while a pack is indexed, one object at a time:
// begin, the object's bytes, end. A nil *spoolWriter keeps nothing. A write
// that fails turns the spool off; the indexing goes on.
type spoolWriter struct {
	f     *os.File
	name  string
	bw    *bufio.Writer
	n     int64 // bytes written
	limit int64
	// bound, when not nil, gives the limit at each object instead.
	bound   func() int64
	start   int64 // the current object's offset, or -1
	objects map[plumbing.Hash]spooledObject
	failed  bool
}

// newSpoolWriter starts a spool of at most limit bytes in dir; nil when
// the file cannot be made, for spooling is only a shortcut.
func newSpoolWriter(dir string, limit int64) *spoolWriter {
	f, err := os.CreateTemp(dir, "tmp_spool_")
	if err != nil {
		return nil
	}
	s := &spoolWriter{f: f, bw: bufio.NewWriterSize(f, 256<<10), limit: limit, start: -1, objects: map[plumbing.Hash]spooledObject{}}
	if os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	return s
}

// begin starts an object of size bytes and returns where to write it, or
// nil when it is not to be kept.
func (s *spoolWriter) begin(size int64) io.Writer {
	if s == nil || s.failed || size > maxSpoolObject {
		return nil
	}
	if s.bound != nil {
		s.limit = s.bound()
	}
	if s.n+size > s.limit {
		return nil
	}
	s.start = s.n
	return s
}

// Write always takes all of b: a failure turns the spool off without
// failing the indexing that feeds it.
func (s *spoolWriter) Write(b []byte) (int, error) {
	if s.failed || s.start < 0 {
		return len(b), nil
	}
	if s.n+int64(len(b)) > s.limit {
		s.failed = true
		return len(b), nil
	}
	if _, err := s.bw.Write(b); err != nil {
		s.failed = true
		return len(b), nil
	}
	s.n += int64(len(b))
	return len(b), nil
}

// end records the object begun last as h, when all its size bytes came;
// chainBase is the largest base it was rebuilt from.
func (s *spoolWriter) end(h plumbing.Hash, typ plumbing.ObjectType, size, chainBase int64) {
	if s == nil || s.start < 0 {
		return
	}
	if !s.failed {
		if s.n-s.start != size {
			s.failed = true // the caller fails too
		} else {
			s.objects[h] = spooledObject{typ: typ, off: s.start, size: size, chainBase: chainBase}
		}
	}
	s.start = -1
}

// finish returns the spool for reading, or nil when it holds nothing or
// failed; the writer is done either way.
func (s *spoolWriter) finish() *spoolFile {
	if s == nil {
		return nil
	}
	if s.failed || len(s.objects) == 0 || s.bw.Flush() != nil {
		s.discard()
		return nil
	}
	return &spoolFile{f: s.f, name: s.name, objects: s.objects}
}

// discard drops the spool.
func (s *spoolWriter) discard() {
	if s == nil {
		return
	}
	s.failed = true
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}
