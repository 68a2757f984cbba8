package git

import (
	"errors"
	"io"
	"os"
	"sync"
)

// A sync reads the headers of thousands of objects (each blob's header
// for its size, each tree's before it is inflated), and a pack keeps the
// objects of one folder side by side: in a 1% sync of 2,000 skills, 3,546
// header reads fell in 411 blocks of 16 KiB. So a header is read with its
// block, and the last blocks are kept: each read was a pread, a few
// microseconds on a VM, where a kept block costs a copy of 40 bytes.
const (
	headerBlock = 16 << 10
	// headerBlocks is how many blocks the store keeps, over all its packs
	// (1 MiB), the oldest let go first: a sync walks a pack roughly in
	// order, and replaying its reads, 64 blocks missed 415 times, 1,024
	// blocks 411.
	headerBlocks = 64
)

// headerCache keeps the last blocks of the packs that headers were read
// from. Safe for concurrent use. Bytes are copied out under its lock, so
// the block it lets go is the buffer the next block is read into: a sync
// reads hundreds of blocks, and each was 16 KiB of fresh heap.
type headerCache struct {
	mu     sync.Mutex
	blocks map[packedAt][]byte // by pack and block start
	order  []packedAt          // oldest first
}

// read fills buf with the pack's bytes at offset, from a kept block when
// it can, and returns how many it filled: fewer than len(buf) only at the
// pack's end. A header that straddles two blocks is read on its own.
func (c *headerCache) read(pi *packIndex, f *os.File, buf []byte, offset int64) (int, error) {
	within := offset % headerBlock
	if within+int64(len(buf)) > headerBlock {
		return readAtMost(f, buf, offset)
	}
	if n, ok := c.copyKept(pi, offset, buf); ok {
		return n, nil
	}
	block := packedAt{pi, offset - within}
	b := c.spare()
	got, err := readAtMost(f, b, block.offset)
	if err != nil {
		return 0, err
	}
	n := 0
	if int64(got) > within {
		n = copy(buf, b[within:got])
	}
	if got == headerBlock {
		c.put(block, b) // the pack's last, short block is not kept
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// copyKept copies into dst the kept bytes of pi from offset to the end of
// their block, if that block is kept.
func (c *headerCache) copyKept(pi *packIndex, offset int64, dst []byte) (int, bool) {
	within := offset % headerBlock
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.blocks[packedAt{pi, offset - within}]
	if !ok {
		return 0, false
	}
	return copy(dst, b[within:]), true
}

// spare returns a buffer for a block: the oldest block's when the cache
// is full (it is let go now), else a new one.
func (c *headerCache) spare() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.order) < headerBlocks {
		return make([]byte, headerBlock)
	}
	return c.evict()
}

// evict lets the oldest block go and returns its buffer; c.mu is held.
func (c *headerCache) evict() []byte {
	b := c.blocks[c.order[0]]
	delete(c.blocks, c.order[0])
	c.order = append(c.order[:0], c.order[1:]...)
	return b
}

// put keeps b as the block at block, letting the oldest go when full.
func (c *headerCache) put(block packedAt, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.blocks[block]; ok {
		return // read side by side: one copy is kept
	}
	if c.blocks == nil {
		c.blocks = make(map[packedAt][]byte, headerBlocks)
	}
	if len(c.order) == headerBlocks {
		c.evict()
	}
	c.blocks[block] = b
	c.order = append(c.order, block)
}

// readAtMost is ReadAt that takes a short read at the end for an answer.
func readAtMost(f *os.File, buf []byte, offset int64) (int, error) {
	n, err := f.ReadAt(buf, offset)
	if err != nil && !(errors.Is(err, io.EOF) && n > 0) {
		return 0, err
	}
	return n, nil
}

// drop forgets every block.
func (c *headerCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks, c.order = nil, nil
}

// packReader reads a pack from off up to end, from the blocks a
// headerCache keeps where it can: an object's deflated data mostly sits
// in the block its header was just read from.
type packReader struct {
	headers *headerCache
	pack    *packIndex
	f       *os.File
	off     int64
	end     int64
}

// Read reads up to the end of a kept block, or with one pread.
func (r *packReader) Read(p []byte) (int, error) {
	if r.off >= r.end {
		return 0, io.EOF
	}
	if int64(len(p)) > r.end-r.off {
		p = p[:r.end-r.off]
	}
	if n, ok := r.headers.copyKept(r.pack, r.off, p); ok {
		r.off += int64(n)
		return n, nil
	}
	n, err := readAtMost(r.f, p, r.off)
	r.off += int64(n)
	return n, err
}
