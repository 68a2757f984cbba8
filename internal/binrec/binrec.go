// Package binrec reads and writes the compact binary records skillsync
// keeps in its cache (a source's skill and file records, a skill's parsed
// frontmatter): unsigned and signed varints, length-prefixed strings and
// fixed-size fields after a magic prefix. A record file is untrusted
// input, so every read is bounded by the bytes left: a forged length or
// count fails the read instead of allocating what the file cannot hold.
package binrec

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"
)

// AppendString appends s with its length in front.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decoder reads one record. Strings are cut from the record's own bytes,
// so a record of 20,000 paths costs no allocation for them. The first
// error sticks: every later read returns zero values, and Err and End
// report it.
type Decoder struct {
	b   []byte
	s   string // the same bytes as b
	off int
	err error
}

// NewDecoder returns a Decoder over data, which must start with magic;
// reading starts after it. data is the record's from then on and must
// never be written again: the strings read share its memory. Records are
// read from files into buffers of their own, and copying each one into a
// string first was a megabyte of fresh memory for a cache of 2,000
// skills, in every process that reads it.
func NewDecoder(data []byte, magic string) *Decoder {
	// Small enough to inline, so a Decoder that does not outlive its
	// caller stays on the caller's stack: one is made per skill record.
	d := &Decoder{b: data, s: unsafe.String(unsafe.SliceData(data), len(data))}
	d.skip(magic)
	return d
}

// skip reads magic, which the record must start with.
func (d *Decoder) skip(magic string) {
	if !strings.HasPrefix(d.s, magic) {
		d.Fail("it does not start with %q", strings.TrimSpace(magic))
		return
	}
	d.off = len(magic)
}

// Fail records an error at the current offset unless one is recorded.
func (d *Decoder) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %s", d.off, fmt.Sprintf(format, args...))
	}
}

// Err is the first error, nil while every read succeeded.
func (d *Decoder) Err() error { return d.err }

// Offset is how many bytes of the record have been read.
func (d *Decoder) Offset() int { return d.off }

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.Fail("bad number")
		return 0
	}
	d.off += n
	return v
}

// Varint reads a signed varint.
func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.Fail("bad number")
		return 0
	}
	d.off += n
	return v
}

// Count reads a number of items that take at least min bytes each (min
// at least 1), so a forged count cannot make the reader allocate more
// than the record holds.
func (d *Decoder) Count(min int) int {
	n := d.Uvarint()
	if d.err == nil && n > uint64(len(d.b)-d.off)/uint64(max(min, 1)) {
		d.Fail("count %d is more than the record can hold", n)
		return 0
	}
	return int(n)
}

// span returns the offsets of the next n bytes and moves past them.
func (d *Decoder) span(n uint64) (int, int) {
	if d.err != nil {
		return 0, 0
	}
	if n > uint64(len(d.b)-d.off) {
		d.Fail("length %d runs past the end", n)
		return 0, 0
	}
	start := d.off
	d.off += int(n)
	return start, d.off
}

// String reads a length-prefixed string.
func (d *Decoder) String() string {
	i, j := d.span(d.Uvarint())
	return d.s[i:j]
}

// Bytes reads a length-prefixed byte string; an empty one is nil. The
// result shares the record's memory and cannot grow into what follows.
func (d *Decoder) Bytes() []byte {
	i, j := d.span(d.Uvarint())
	if i == j {
		return nil
	}
	return d.b[i:j:j]
}

// Fixed copies the next len(dst) bytes into dst.
func (d *Decoder) Fixed(dst []byte) {
	i, j := d.span(uint64(len(dst)))
	copy(dst, d.b[i:j])
}

// End reports the first error, or one when bytes follow the record.
func (d *Decoder) End() error {
	if d.err == nil && d.off != len(d.b) {
		d.Fail("%d bytes follow the record", len(d.b)-d.off)
	}
	return d.err
}
