package git

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
)

// packIdx is a pack's .idx file (version 2), searched where it is: read
// whole into memory for a sync, which looks up thousands of objects, or in
// place in its open file for a fetch's quick questions (quickObjects),
// which look up a few. Only the fan-out is decoded; a lookup reads the part
// of the names table the fan-out points to, then the object's offset.
// go-git's decoder copied every name, CRC and offset of the index into maps
// and slices first: for a store of 30,000 objects that was most of what a
// sync with nothing new spent on the store.
type packIdx struct {
	// data is the whole index when it was read whole; r reads it
	// otherwise.
	data   []byte
	r      io.ReaderAt
	fanout [256]uint32
	n      int64 // objects
	large  int64 // entries of the table of 64-bit offsets
}

var idxMagic = []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}

// idxNamesAt is where an index's table of names starts, after its header
// and fan-out.
const idxNamesAt = 8 + 256*4

// maxIdxBucket bounds the names of an index read at once (20 bytes
// each); a store of a million objects has some 4,000 in a fan-out bucket.
const maxIdxBucket = 1 << 14

// errBadIndex is wrapped by the error for an index that does not parse.
var errBadIndex = errors.New("malformed pack index")

// readIdx reads and checks the index at path, whole.
func readIdx(path string) (*packIdx, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, info.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return parseIdx(data)
}

// parseIdx checks the index in data; see openIdx.
func parseIdx(data []byte) (*packIdx, error) {
	idx, err := openIdx(bytes.NewReader(data), int64(len(data)))
	if err == nil {
		idx.data = data
	}
	return idx, err
}

// openIdx checks the layout of the index of size bytes in r: the version 2
// header, a fan-out that never decreases, and room for every table it
// announces, to the byte. Nothing else of it is read.
func openIdx(r io.ReaderAt, size int64) (*packIdx, error) {
	var head [idxNamesAt]byte
	if size < int64(len(head))+2*20 {
		return nil, fmt.Errorf("%w: not a version 2 index", errBadIndex)
	}
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, fmt.Errorf("read pack index: %w", err)
	}
	if !bytes.Equal(head[:8], idxMagic) {
		return nil, fmt.Errorf("%w: not a version 2 index", errBadIndex)
	}
	idx := &packIdx{r: r}
	prev := uint32(0)
	for i := range idx.fanout {
		n := binary.BigEndian.Uint32(head[8+4*i:])
		if n < prev {
			return nil, fmt.Errorf("%w: fanout decreases at %d", errBadIndex, i)
		}
		idx.fanout[i], prev = n, n
	}
	idx.n = int64(prev)
	// Names, CRCs and offsets, then the two checksums; what is left is
	// the table of large offsets.
	fixed := int64(idxNamesAt) + idx.n*(20+4+4) + 2*20
	if fixed > size {
		return nil, fmt.Errorf("%w: %d objects do not fit in %d bytes", errBadIndex, idx.n, size)
	}
	if (size-fixed)%8 != 0 {
		return nil, fmt.Errorf("%w: a large offset table of %d bytes", errBadIndex, size-fixed)
	}
	idx.large = (size - fixed) / 8
	return idx, nil
}

// readAt fills b from offset at of the index.
func (idx *packIdx) readAt(b []byte, at int64) error {
	if idx.data != nil {
		copy(b, idx.data[at:at+int64(len(b))])
		return nil
	}
	if _, err := idx.r.ReadAt(b, at); err != nil {
		return fmt.Errorf("read pack index: %w", err)
	}
	return nil
}

// names returns the names of objects lo to hi.
func (idx *packIdx) names(lo, hi int64) ([]byte, error) {
	if idx.data != nil {
		return idx.data[idxNamesAt+lo*20 : idxNamesAt+hi*20], nil
	}
	b := make([]byte, (hi-lo)*20)
	return b, idx.readAt(b, idxNamesAt+lo*20)
}

// FindOffset returns where in the pack the object h starts, or
// plumbing.ErrObjectNotFound. Positions are int64: an index past 4 GiB
// overflows a uint32.
func (idx *packIdx) FindOffset(h plumbing.Hash) (int64, error) {
	lo := int64(0)
	if h[0] > 0 {
		lo = int64(idx.fanout[h[0]-1])
	}
	hi := int64(idx.fanout[h[0]])
	// An index of another's repository can make one fan-out bucket as
	// large as its (maybe sparse) file: narrowed by single reads first,
	// the part read whole stays small.
	var probe [20]byte
	for hi-lo > maxIdxBucket {
		m := lo + (hi-lo)/2
		if err := idx.readAt(probe[:], idxNamesAt+m*20); err != nil {
			return 0, err
		}
		switch c := bytes.Compare(probe[:], h[:]); {
		case c == 0:
			return idx.offset(m)
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	if lo >= hi {
		return 0, plumbing.ErrObjectNotFound
	}
	names, err := idx.names(lo, hi)
	if err != nil {
		return 0, err
	}
	i, j := 0, int(hi-lo)
	for i < j {
		m := int(uint(i+j) >> 1)
		switch c := bytes.Compare(names[m*20:m*20+20], h[:]); {
		case c == 0:
			return idx.offset(lo + int64(m))
		case c < 0:
			i = m + 1
		default:
			j = m
		}
	}
	return 0, plumbing.ErrObjectNotFound
}

// offset is the pack offset of the i-th object.
func (idx *packIdx) offset(i int64) (int64, error) {
	var b [8]byte
	if err := idx.readAt(b[:4], idxNamesAt+idx.n*(20+4)+i*4); err != nil {
		return 0, err
	}
	off := binary.BigEndian.Uint32(b[:4])
	if off&0x80000000 == 0 {
		return int64(off), nil
	}
	k := int64(off & 0x7fffffff)
	if k >= idx.large {
		return 0, fmt.Errorf("%w: large offset %d is past its table", errBadIndex, k)
	}
	if err := idx.readAt(b[:], idxNamesAt+idx.n*(20+4+4)+k*8); err != nil {
		return 0, err
	}
	big := binary.BigEndian.Uint64(b[:])
	if big > 1<<62 {
		return 0, fmt.Errorf("%w: offset %d", errBadIndex, big)
	}
	return int64(big), nil
}
