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

// packIdx is a pack's .idx file (version 2), read whole and searched in
// place. go-git's decoder copied every name, CRC and offset of the index
// into maps and slices first: for a store of 30,000 objects that was
// most of what a sync with nothing new spent on the store, though a sync
// looks up a few thousand objects at most.
type packIdx struct {
	fanout  [256]uint32
	names   []byte // count hashes of 20 bytes, sorted
	offsets []byte // count big-endian uint32
	large   []byte // 64-bit offsets, for packs over 2 GiB
}

var idxMagic = []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}

// errBadIndex is wrapped by the error for an index that does not parse.
var errBadIndex = errors.New("malformed pack index")

// readIdx reads and checks the index at path.
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

// parseIdx checks data's layout: the version 2 header, a fanout table
// that never decreases, and room for every table it announces.
func parseIdx(data []byte) (*packIdx, error) {
	const head = 8 + 256*4
	if len(data) < head+2*20 || !bytes.Equal(data[:8], idxMagic) {
		return nil, fmt.Errorf("%w: not a version 2 index", errBadIndex)
	}
	idx := &packIdx{}
	prev := uint32(0)
	for i := range idx.fanout {
		n := binary.BigEndian.Uint32(data[8+4*i:])
		if n < prev {
			return nil, fmt.Errorf("%w: fanout decreases at %d", errBadIndex, i)
		}
		idx.fanout[i], prev = n, n
	}
	count := uint64(prev)
	// Names, CRCs and offsets, then the two checksums.
	need := uint64(head) + count*(20+4+4) + 2*20
	if need > uint64(len(data)) {
		return nil, fmt.Errorf("%w: %d objects do not fit in %d bytes", errBadIndex, count, len(data))
	}
	names := uint64(head)
	offsets := names + count*(20+4)
	idx.names = data[names : names+count*20]
	idx.offsets = data[offsets : offsets+count*4]
	idx.large = data[offsets+count*4 : uint64(len(data))-2*20]
	if len(idx.large)%8 != 0 {
		return nil, fmt.Errorf("%w: a large offset table of %d bytes", errBadIndex, len(idx.large))
	}
	return idx, nil
}

// FindOffset returns where in the pack the object h starts, or
// plumbing.ErrObjectNotFound.
func (idx *packIdx) FindOffset(h plumbing.Hash) (int64, error) {
	lo := uint32(0)
	if h[0] > 0 {
		lo = idx.fanout[h[0]-1]
	}
	hi := idx.fanout[h[0]]
	for lo < hi {
		mid := lo + (hi-lo)/2
		at := int(mid) * 20 // not in uint32: an index past 4 GiB overflows it
		switch c := bytes.Compare(idx.names[at:at+20], h[:]); {
		case c == 0:
			return idx.offset(mid)
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, plumbing.ErrObjectNotFound
}

// offset is the pack offset of the i-th object.
func (idx *packIdx) offset(i uint32) (int64, error) {
	off := binary.BigEndian.Uint32(idx.offsets[int(i)*4:])
	if off&0x80000000 == 0 {
		return int64(off), nil
	}
	at := uint64(off&0x7fffffff) * 8
	if at+8 > uint64(len(idx.large)) {
		return 0, fmt.Errorf("%w: large offset %d is past its table", errBadIndex, off&0x7fffffff)
	}
	big := binary.BigEndian.Uint64(idx.large[at:])
	if big > 1<<62 {
		return 0, fmt.Errorf("%w: offset %d", errBadIndex, big)
	}
	return int64(big), nil
}
