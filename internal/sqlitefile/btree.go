package sqlitefile

import (
	"context"
	"encoding/binary"
)

// maxDepth bounds a table's b-tree, as SQLite's own cursor does.
const maxDepth = 20

// maxPayload bounds a row's payload: SQLite's largest string or blob is
// a billion bytes.
const maxPayload = 1 << 31

// maxRecordHeader bounds a record's header: 2,000 columns (SQLite's most)
// of at most 9 bytes each, and the header's own size.
const maxRecordHeader = 1 << 15

// The b-tree page kinds a table is made of.
const (
	interiorTable = 0x05
	leafTable     = 0x0d
)

// page is a table b-tree page as read.
type page struct {
	n     uint32
	data  []byte
	kind  byte
	cells int
	ptrs  int    // where the cell pointer array begins
	right uint32 // an interior page's right-most child
}

// loadPage reads page n into buf and checks its header.
func (db *DB) loadPage(n uint32, buf []byte) (page, error) {
	if err := db.page(n, buf); err != nil {
		return page{}, err
	}
	p := page{n: n, data: buf[:db.usable]}
	hdr := 0
	if n == 1 {
		hdr = headerSize
	}
	p.kind = buf[hdr]
	p.cells = int(binary.BigEndian.Uint16(buf[hdr+3:]))
	switch p.kind {
	case leafTable:
		p.ptrs = hdr + 8
	case interiorTable:
		p.ptrs = hdr + 12
		p.right = binary.BigEndian.Uint32(buf[hdr+8:])
	default:
		return page{}, malformed(n, "kind %#x, not a page of a table", p.kind)
	}
	if p.ptrs+2*p.cells > len(p.data) {
		return page{}, malformed(n, "%d cells do not fit", p.cells)
	}
	return p, nil
}

// cell returns the bytes from cell i to the end of the page's usable
// space.
func (p *page) cell(i int) ([]byte, error) {
	off := int(binary.BigEndian.Uint16(p.data[p.ptrs+2*i:]))
	if off < p.ptrs+2*p.cells || off >= len(p.data) {
		return nil, malformed(p.n, "cell %d at %d, outside the page", i, off)
	}
	return p.data[off:], nil
}

// walk hands fn the rows of the b-tree under page n in rowid order. A
// page reached twice, or a tree deeper than maxDepth, is malformed: a
// hostile file's loop would otherwise never end. bufs holds a page buffer
// per level, reused across the walk.
func (t *Table) walk(ctx context.Context, n uint32, depth int, seen map[uint32]bool, bufs [][]byte, row *Row, fn func(*Row) error) error {
	if depth >= maxDepth {
		return malformed(n, "a table deeper than %d levels", maxDepth)
	}
	if seen[n] {
		return malformed(n, "reached twice in table %s", t.Name)
	}
	seen[n] = true
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := t.db.loadPage(n, bufs[depth])
	if err != nil {
		return err
	}
	if p.kind == leafTable {
		for i := range p.cells {
			if err := row.load(&p, i); err != nil {
				return err
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range p.cells {
		c, err := p.cell(i)
		if err != nil {
			return err
		}
		if len(c) < 4 {
			return malformed(n, "cell %d cut short", i)
		}
		if err := t.walk(ctx, binary.BigEndian.Uint32(c), depth+1, seen, bufs, row, fn); err != nil {
			return err
		}
	}
	return t.walk(ctx, p.right, depth+1, seen, bufs, row, fn)
}

// localSize is how much of a payload of size bytes a table leaf cell
// holds in its page; the rest goes to overflow pages.
func (db *DB) localSize(size int64) int {
	u := int64(db.usable)
	x := u - 35
	if size <= x {
		return int(size)
	}
	m := (u-12)*32/255 - 23
	if k := m + (size-m)%(u-4); k <= x {
		return int(k)
	}
	return int(m)
}

// varint decodes SQLite's variable-length integer: up to 8 bytes of 7
// bits, then one of 8. It returns 0 bytes read when b ends first.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}
