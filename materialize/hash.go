package materialize

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// skillHasher computes a skill's hash: SHA-256 over its files in path
// order, each framed as len(path) path len(content) content with 8-byte
// big-endian lengths, so no two different skills share a hash.
type skillHasher struct {
	h hash.Hash
}

func newSkillHasher() *skillHasher { return &skillHasher{h: sha256.New()} }

// add adds one file; files must come in path order.
func (s *skillHasher) add(path string, content []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(path)))
	s.h.Write(n[:])
	s.h.Write([]byte(path))
	binary.BigEndian.PutUint64(n[:], uint64(len(content)))
	s.h.Write(n[:])
	s.h.Write(content)
}

func (s *skillHasher) sum() string { return hex.EncodeToString(s.h.Sum(nil)) }

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
