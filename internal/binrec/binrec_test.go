package binrec

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestRoundTrip: what the appenders write reads back field by field.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b := []byte("MAGIC\n")
	b = binary.AppendUvarint(b, 2)
	b = AppendString(b, "alpha")
	b = AppendString(b, "")
	b = binary.AppendVarint(b, -42)
	b = append(b, 1, 2, 3)
	d := NewDecoder(b, "MAGIC\n")
	if n := d.Count(1); n != 2 {
		t.Fatalf("count %d", n)
	}
	if s := d.String(); s != "alpha" {
		t.Errorf("string %q", s)
	}
	if s := d.Bytes(); s != nil {
		t.Errorf("empty bytes %q, want nil", s)
	}
	if v := d.Varint(); v != -42 {
		t.Errorf("varint %d", v)
	}
	var fixed [3]byte
	d.Fixed(fixed[:])
	if fixed != [3]byte{1, 2, 3} {
		t.Errorf("fixed %v", fixed)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
}

// TestHostileInput: a forged count, a length past the end, a bad number,
// a wrong magic and trailing bytes each fail, and the first error sticks.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, want string
		data       []byte
		read       func(*Decoder)
	}{
		{"forged count", "more than the record can hold", binary.AppendUvarint([]byte("M"), 1<<40), func(d *Decoder) { d.Count(1) }},
		{"long string", "runs past the end", binary.AppendUvarint([]byte("M"), 99), func(d *Decoder) { _ = d.String() }},
		{"bad number", "bad number", []byte("M\xff\xff"), func(d *Decoder) { d.Uvarint() }},
		{"empty", "bad number", []byte("M"), func(d *Decoder) { d.Varint() }},
		{"magic", "does not start with", []byte("X"), func(d *Decoder) {}},
		{"trailing", "1 bytes follow", []byte("M\x00\x00"), func(d *Decoder) { d.Uvarint() }},
	} {
		d := NewDecoder(c.data, "M")
		c.read(d)
		err := d.End()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
			continue
		}
		if d.Uvarint() != 0 || d.String() != "" || d.Err() != err {
			t.Errorf("%s: reads after the error are not zero or the error changed", c.name)
		}
	}
}

// TestStringsShareTheRecord: reading a record of many strings allocates
// nothing for them, the record's bytes included.
func TestStringsShareTheRecord(t *testing.T) {
	b := []byte("MAGIC\n")
	b = binary.AppendUvarint(b, 1000)
	for i := range 1000 {
		b = AppendString(b, strings.Repeat("x", i%64))
	}
	var sum int
	allocs := testing.AllocsPerRun(20, func() {
		d := NewDecoder(b, "MAGIC\n")
		for range d.Count(1) {
			sum += len(d.String())
		}
		if d.End() != nil {
			t.Fatal(d.End())
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations to read 1,000 strings, want at most the decoder's", allocs)
	}
}
