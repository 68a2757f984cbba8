package sqlitefile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Kind is the storage class of a value.
type Kind uint8

// The storage classes.
const (
	Null Kind = iota
	Integer
	Float
	Text
	Blob
)

// Value is one column of a row.
type Value struct {
	Kind  Kind
	Int   int64
	Float float64
	Bytes []byte // a text's or a blob's, the caller's to keep
}

// Ref names a row by where it was found: its leaf page and cell. It holds
// within the snapshot of the DB that found it.
type Ref struct {
	page  uint32
	cell  int
	rowid int64
}

// Row is one row of a table. Scan hands the same Row to every call: it
// is valid until the call returns. Its values are read on demand, so a
// large text is read only when asked for.
type Row struct {
	t     *Table
	ref   Ref
	rowid int64

	// The payload: the part in the cell (a slice of the page buffer),
	// its whole size and the first overflow page.
	local    []byte
	size     int64
	overflow uint32

	types []uint64 // each field's serial type
	offs  []int64  // each field's offset in the payload
	buf   []byte   // scratch for the record header
	pbuf  []byte   // scratch for an overflow page
}

// load reads cell i of leaf page p into r and decodes its record header.
func (r *Row) load(p *page, i int) error {
	c, err := p.cell(i)
	if err != nil {
		return err
	}
	size, k := varint(c)
	if k == 0 || size > maxPayload {
		return malformed(p.n, "cell %d: payload size", i)
	}
	c = c[k:]
	rowid, k := varint(c)
	if k == 0 {
		return malformed(p.n, "cell %d: rowid", i)
	}
	c = c[k:]
	r.ref, r.rowid, r.size = Ref{page: p.n, cell: i, rowid: int64(rowid)}, int64(rowid), int64(size)
	local := r.t.db.localSize(r.size)
	r.overflow = 0
	if int64(local) < r.size {
		if local+4 > len(c) {
			return malformed(p.n, "cell %d: overflow page number outside the page", i)
		}
		r.overflow = binary.BigEndian.Uint32(c[local:])
	} else if local > len(c) {
		return malformed(p.n, "cell %d: payload outside the page", i)
	}
	r.local = c[:local]
	return r.decodeHeader()
}

// decodeHeader reads the record's header: the serial type of each field,
// from which its offset follows.
func (r *Row) decodeHeader() error {
	first, err := r.read(0, min(9, r.size), r.buf[:0])
	if err != nil {
		return err
	}
	hs, k := varint(first)
	if k == 0 || hs < uint64(k) || int64(hs) > r.size || hs > maxRecordHeader {
		return malformed(r.ref.page, "cell %d: record header size %d", r.ref.cell, hs)
	}
	hdr, err := r.read(0, int64(hs), first[:0])
	if err != nil {
		return err
	}
	r.buf = hdr
	r.types, r.offs = r.types[:0], r.offs[:0]
	off := int64(hs)
	for pos := k; pos < len(hdr); {
		t, n := varint(hdr[pos:])
		if n == 0 {
			return malformed(r.ref.page, "cell %d: record header cut short", r.ref.cell)
		}
		pos += n
		size, ok := fieldSize(t)
		if !ok {
			return malformed(r.ref.page, "cell %d: serial type %d", r.ref.cell, t)
		}
		r.types = append(r.types, t)
		r.offs = append(r.offs, off)
		off += size
		if off > r.size {
			return malformed(r.ref.page, "cell %d: fields past the payload", r.ref.cell)
		}
	}
	return nil
}

// fieldSize is the bytes a field of serial type t takes.
func fieldSize(t uint64) (int64, bool) {
	switch {
	case t <= 4:
		return int64(t), true
	case t == 5:
		return 6, true
	case t == 6 || t == 7:
		return 8, true
	case t == 8 || t == 9:
		return 0, true
	case t == 10 || t == 11:
		return 0, false
	case t > maxPayload*2+13:
		return 0, false
	}
	return int64(t-12) / 2, true
}

// Rowid is the row's rowid.
func (r *Row) Rowid() int64 { return r.rowid }

// Ref is where the row is, for Table.Row to read it again.
func (r *Row) Ref() Ref { return r.ref }

// field is where column i is in the record, or -1 when the record does
// not hold it.
func (r *Row) field(i int) int {
	if i < 0 || i >= len(r.t.cols) || i == r.t.rowid {
		return -1
	}
	if f := r.t.cols[i].field; f < len(r.types) {
		return f
	}
	return -1
}

// Len is the length in bytes of column i's text or blob, without reading
// it; 0 for another kind.
func (r *Row) Len(i int) int64 {
	f := r.field(i)
	if f < 0 || r.types[f] < 12 {
		return 0
	}
	size, _ := fieldSize(r.types[f])
	return size
}

// Column reads column i. A column the record does not hold, added to the
// table after the row was written, is its DEFAULT (a literal; an
// expression is not read); a column past the table's is Null; a generated
// VIRTUAL column is computed by SQLite, and is not read.
func (r *Row) Column(i int) (Value, error) {
	if i == r.t.rowid && i >= 0 {
		return Value{Kind: Integer, Int: r.rowid}, nil
	}
	if i < 0 || i >= len(r.t.cols) {
		return Value{}, nil
	}
	c := &r.t.cols[i]
	if c.field < 0 {
		return Value{}, fmt.Errorf("table %s: column %s is generated, not stored, and is not read", r.t.Name, c.name)
	}
	f := r.field(i)
	if f < 0 {
		if c.defExpr {
			return Value{}, fmt.Errorf("table %s: column %s was added with a DEFAULT expression, which is not read", r.t.Name, c.name)
		}
		v := c.def
		v.Bytes = bytes.Clone(v.Bytes)
		return v, nil
	}
	t := r.types[f]
	size, _ := fieldSize(t)
	var b []byte
	if size > 0 {
		var err error
		if b, err = r.read(r.offs[f], size, nil); err != nil {
			return Value{}, err
		}
	}
	switch {
	case t == 0:
		return Value{}, nil
	case t == 8 || t == 9:
		return Value{Kind: Integer, Int: int64(t - 8)}, nil
	case t == 7:
		return Value{Kind: Float, Float: math.Float64frombits(binary.BigEndian.Uint64(b))}, nil
	case t <= 6:
		// A big-endian two's-complement integer of 1 to 8 bytes.
		v := int64(int8(b[0]))
		for _, c := range b[1:] {
			v = v<<8 | int64(c)
		}
		return Value{Kind: Integer, Int: v}, nil
	case t%2 == 0:
		return Value{Kind: Blob, Bytes: b}, nil
	}
	return Value{Kind: Text, Bytes: b}, nil
}

// read returns n bytes of the payload from off, appended to dst: from the
// cell, then along the chain of overflow pages, each of which begins with
// the number of the next. A chain that ends early, or comes back to a
// page, is malformed.
func (r *Row) read(off, n int64, dst []byte) ([]byte, error) {
	if off < 0 || n < 0 || off+n > r.size {
		return nil, malformed(r.ref.page, "cell %d: bytes %d to %d of a payload of %d", r.ref.cell, off, off+n, r.size)
	}
	end := off + n
	local := int64(len(r.local))
	if off < local {
		dst = append(dst, r.local[off:min(local, end)]...)
	}
	db := r.t.db
	per := int64(db.usable - 4)
	pg, start := r.overflow, local
	var next [4]byte
	var seen map[uint32]bool
	for start < end {
		if pg == 0 || seen[pg] {
			return nil, malformed(r.ref.page, "cell %d: overflow chain broken at byte %d", r.ref.cell, start)
		}
		if seen == nil {
			seen = map[uint32]bool{}
		}
		seen[pg] = true
		stop := start + per
		lo, hi := max(start, off), min(stop, end)
		if lo < hi {
			if cap(r.pbuf) < db.pageSize {
				r.pbuf = make([]byte, db.pageSize)
			}
			pb := r.pbuf[:4+hi-start]
			if err := db.page(pg, pb); err != nil {
				return nil, err
			}
			dst = append(dst, pb[4+lo-start:]...)
			copy(next[:], pb)
		} else if err := db.page(pg, next[:]); err != nil {
			return nil, err
		}
		pg, start = binary.BigEndian.Uint32(next[:]), stop
	}
	return dst, nil
}
