package gittest

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
)

// Repeated is content of Size bytes: Head, then Unit over and over, the
// last time cut short. It stands for a huge object (a blob of zeros, a
// commit with a 17 MiB message) that a test makes without holding it: a
// race-built test that built one in memory, wrote it out and had git
// compress it spent seconds on what proves nothing.
type Repeated struct {
	Head, Unit string
	Size       int64
}

// Reader reads the content.
func (c Repeated) Reader() io.Reader {
	if c.Size < int64(len(c.Head)) || (c.Unit == "" && c.Size > int64(len(c.Head))) {
		panic(fmt.Sprintf("gittest: %d bytes cannot hold the head of %d bytes and a unit of %d", c.Size, len(c.Head), len(c.Unit)))
	}
	return io.MultiReader(strings.NewReader(c.Head), &repeater{unit: c.Unit, left: c.Size - int64(len(c.Head))})
}

type repeater struct {
	unit string
	at   int // where in unit the next byte is
	left int64
}

func (r *repeater) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	// One unit from where the last read stopped, then the bytes so far
	// copied after themselves: a whole number of units, so the pattern
	// goes on.
	n := copy(p, r.unit[r.at:])
	n += copy(p[n:], r.unit[:r.at])
	for n < len(p) {
		n += copy(p[n:], p[:n])
	}
	r.at = (r.at + len(p)) % len(r.unit)
	r.left -= int64(len(p))
	return len(p), nil
}

// Zeros reads n zero bytes: a blob that is huge inflated and tiny packed.
func Zeros(n int64) io.Reader { return Repeated{Unit: "\x00", Size: n}.Reader() }

// ZlibZeros returns a zlib stream of n zero bytes (n > 0), written by hand:
// the race-built compressor took seconds over 64 MiB.
func ZlibZeros(n int64) []byte { return Repeated{Unit: "\x00", Size: n}.Zlib() }

// Zlib returns a zlib stream of the content, written by hand, in the time
// it takes to checksum it: one block of deflate's fixed codes holding the
// head, the first unit and what does not fill a copy as literals, then
// copies of 258 bytes from one unit back. The unit is at most 32 KiB.
func (c Repeated) Zlib() []byte {
	if len(c.Unit) > 32<<10 {
		panic("gittest: a unit over deflate's window")
	}
	var w bitWriter
	w.out = []byte{0x78, 0x01} // deflate, 32 KiB window; the check bits
	w.put(1, 1)                // the last block
	w.put(1, 2)                // of fixed codes
	rest := c.Size - int64(len(c.Head))
	literals := rest // of the repeated part
	if p := int64(len(c.Unit)); rest > p+258 {
		literals = p + (rest-p)%258
	}
	lit, err := io.ReadAll(io.LimitReader(c.Reader(), int64(len(c.Head))+literals))
	if err != nil {
		panic(err)
	}
	for _, b := range lit {
		if b < 144 {
			w.code(0x30+uint64(b), 8)
		} else {
			w.code(0x190+uint64(b-144), 9)
		}
	}
	if copies := (rest - literals) / 258; copies > 0 {
		// One copy's bits, written at once: length 258 (code 285),
		// then the distance's code and extra bits.
		dist, extra, width := distanceCode(len(c.Unit))
		copyBits := reversed(0xc5, 8) | reversed(dist, 5)<<8 | extra<<13
		for range copies {
			w.put(copyBits, 13+width)
		}
	}
	w.code(0, 7)           // end of block (code 256)
	w.put(0, (8-w.bits)%8) // to the byte
	return binary.BigEndian.AppendUint32(w.out, c.adler32())
}

// adlerMod is Adler-32's modulus.
const adlerMod = 65521

// adler32 returns the content's Adler-32 checksum, worked out per unit:
// the race-built hash/adler32 reads 64 MiB a byte at a time, each read
// checked by the race detector. A unit of p bytes u_0..u_(p-1) read
// after a sum a and b adds S = u_0+...+u_(p-1) to a, and p*a + W to b,
// with W = p*u_0 + (p-1)*u_1 + ... + 1*u_(p-1); k units add k*S to a
// and k*p*a + p*S*k*(k-1)/2 + k*W to b.
func (c Repeated) adler32() uint32 {
	a, b := adlerBytes(1, 0, c.Head)
	rest := c.Size - int64(len(c.Head))
	if rest == 0 {
		return uint32(b<<16 | a)
	}
	p := uint64(len(c.Unit))
	k := uint64(rest) / p
	var sum, weighted uint64
	for j := range p {
		sum += uint64(c.Unit[j])
		weighted += (p - j) * uint64(c.Unit[j])
	}
	sum, weighted = sum%adlerMod, weighted%adlerMod
	km := k % adlerMod
	pairs := k / 2 % adlerMod * ((k - 1) % adlerMod) // k*(k-1)/2, halved where it is even
	if k%2 == 1 {
		pairs = km * ((k - 1) / 2 % adlerMod)
	}
	b = (b + km*(p%adlerMod)%adlerMod*a + p%adlerMod*sum%adlerMod*(pairs%adlerMod) + km*weighted) % adlerMod
	a = (a + km*sum) % adlerMod
	a, b = adlerBytes(a, b, c.Unit[:uint64(rest)%p])
	return uint32(b<<16 | a)
}

// adlerBytes goes on with an Adler-32 sum a, b over s.
func adlerBytes(a, b uint64, s string) (uint64, uint64) {
	for i := 0; i < len(s); i++ {
		a = (a + uint64(s[i])) % adlerMod
		b = (b + a) % adlerMod
	}
	return a, b
}

// distanceCode returns deflate's code for a copy from d bytes back (1 to
// 32768), and its extra bits and their width.
func distanceCode(d int) (code, extra uint64, width uint) {
	if d <= 4 {
		return uint64(d - 1), 0, 0
	}
	v := uint64(d - 1)
	width = uint(bits.Len64(v) - 2)
	return uint64(2*width+2) + (v>>width)&1, v & (1<<width - 1), width
}

// bitWriter writes deflate's bits, lowest first.
type bitWriter struct {
	out  []byte
	acc  uint64
	bits uint
}

// put writes width bits of v, lowest first.
func (w *bitWriter) put(v uint64, width uint) {
	w.acc |= v << w.bits
	for w.bits += width; w.bits >= 8; w.bits -= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
	}
}

// code writes a Huffman code, highest bit first.
func (w *bitWriter) code(c uint64, width uint) {
	w.put(reversed(c, width), width)
}

// reversed is a Huffman code of width bits as put writes it.
func reversed(c uint64, width uint) uint64 { return bits.Reverse64(c) >> (64 - width) }

// packTypes are the pack's numbers for the kinds of object.
var packTypes = map[string]byte{"commit": 1, "tree": 2, "blob": 3, "tag": 4}

// PackObject stores the content as an object of kind (commit, tree,
// blob, tag) in a pack of its own, pack and index written here as git
// index-pack would write them, and returns the object's hash. The data
// is compressed by Zlib, and git serves an object from a pack as it is
// stored, so a huge object costs neither this test nor git a compression.
func (r *Repo) PackObject(kind string, c Repeated) string {
	r.t.Helper()
	typ, ok := packTypes[kind]
	if !ok {
		r.t.Fatalf("PackObject: no kind %q", kind)
	}
	id := sha1.New()
	fmt.Fprintf(id, "%s %d\x00", kind, c.Size)
	if _, err := io.Copy(id, c.Reader()); err != nil {
		r.t.Fatal(err)
	}
	hash := id.Sum(nil)

	entry := []byte{typ<<4 | byte(c.Size&15)}
	for size := c.Size >> 4; size > 0; size >>= 7 {
		entry[len(entry)-1] |= 0x80
		entry = append(entry, byte(size&0x7f))
	}
	entry = append(entry, c.Zlib()...)
	var pack bytes.Buffer
	pack.WriteString("PACK\x00\x00\x00\x02\x00\x00\x00\x01")
	pack.Write(entry)
	packSum := sha1.Sum(pack.Bytes())
	pack.Write(packSum[:])

	// The index, version 2, of its one object at offset 12.
	var idx bytes.Buffer
	idxSum := sha1.New()
	w := bufio.NewWriter(io.MultiWriter(&idx, idxSum))
	w.WriteString("\xfftOc\x00\x00\x00\x02")
	for i := 0; i < 256; i++ {
		var n uint32
		if i >= int(hash[0]) {
			n = 1
		}
		binary.Write(w, binary.BigEndian, n)
	}
	w.Write(hash)
	binary.Write(w, binary.BigEndian, crc32.ChecksumIEEE(entry))
	binary.Write(w, binary.BigEndian, uint32(12))
	w.Write(packSum[:])
	if err := w.Flush(); err != nil {
		r.t.Fatal(err)
	}
	idx.Write(idxSum.Sum(nil))

	base := filepath.Join(r.Dir, ".git", "objects", "pack", "pack-"+hex.EncodeToString(packSum[:]))
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		r.t.Fatal(err)
	}
	// The pack before its index: git finds a pack by its index.
	for _, f := range []struct {
		ext  string
		data []byte
	}{{".pack", pack.Bytes()}, {".idx", idx.Bytes()}} {
		if err := os.WriteFile(base+f.ext, f.data, 0o444); err != nil {
			r.t.Fatal(err)
		}
	}
	return hex.EncodeToString(hash)
}
