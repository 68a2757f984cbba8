// Package skillhash defines a skill's hash: the one value that says two
// copies of a skill hold the same files, whatever source they came from.
// skillsync.lock, the cache's records, the targets' records, drafts and
// the PostgreSQL registry all hold it.
//
// It is SHA-256 over a header line and then, for each file in path order,
// len(path) path size sha256(content), the lengths and the size as 8-byte
// big-endian integers. It covers each file through the file's own
// SHA-256, which the cache records, so a skill of which one file changed
// is hashed again without reading the files that did not: a sync that
// brings 1% of a source reads 1% of its bytes.
//
// Version 1 (skillsync.lock version 1) hashed the files' contents into
// one stream; nothing can turn such a hash into this one without the
// files, so a version-1 lock is rewritten, not converted.
package skillhash

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// header starts every skill hash, so that no other SHA-256 skillsync
// computes (of a file, of a record) can be taken for one.
const header = "skillsync skill hash 2\n"

// Hasher computes a skill's hash from its files, added in path order.
type Hasher struct {
	h hash.Hash
	// frame holds one file's frame while it is written: one Write a
	// file, and no allocation once it has grown to the longest path.
	frame []byte
}

// New returns a Hasher with no file added.
func New() *Hasher {
	h := &Hasher{h: sha256.New()}
	h.h.Write([]byte(header))
	return h
}

// Add adds one file: its path in the skill, its size and the SHA-256 of
// its content. Files must come in strictly increasing path order.
func (s *Hasher) Add(path string, size int64, sum [32]byte) {
	b := binary.BigEndian.AppendUint64(s.frame[:0], uint64(len(path)))
	b = append(b, path...)
	b = binary.BigEndian.AppendUint64(b, uint64(size))
	b = append(b, sum[:]...)
	s.h.Write(b)
	s.frame = b
}

// Sum returns the hash of the files added so far.
func (s *Hasher) Sum() [32]byte {
	var out [32]byte
	s.h.Sum(out[:0])
	return out
}
