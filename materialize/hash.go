package materialize

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// Hash is a SHA-256 digest: of one file, or of a whole skill (see
// skillHasher). Records hold it as lower-case hex.
type Hash [32]byte

// String returns h in lower-case hex, or "" for the zero Hash, which
// stands for no hash at all (no content hashes to it in practice).
func (h Hash) String() string {
	if h.IsZero() {
		return ""
	}
	return hex.EncodeToString(h[:])
}

// Short returns the first 12 hex digits of h, enough to tell skills apart
// in messages; "" for the zero Hash.
func (h Hash) Short() string {
	if h.IsZero() {
		return ""
	}
	return hex.EncodeToString(h[:6])
}

// IsZero reports whether h is the zero Hash.
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash reads a Hash from 64 hex digits; "" is the zero Hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if s == "" {
		return h, nil
	}
	if len(s) != 2*len(h) {
		return h, fmt.Errorf("hash %q is not %d hex digits", s, 2*len(h))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return Hash{}, fmt.Errorf("hash %q: %w", s, err)
	}
	return h, nil
}

// MarshalText encodes h as String does.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes h as ParseHash does.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// skillHasher computes a skill's hash: SHA-256 over its files in path
// order, each framed as len(path) path len(content) content with 8-byte
// big-endian lengths, so no two different skills share a hash. Content is
// written in pieces, after its length is known, so it never has to be in
// memory whole.
type skillHasher struct {
	h hash.Hash
}

func newSkillHasher() *skillHasher { return &skillHasher{h: sha256.New()} }

// begin starts one file of size bytes; files must come in path order, and
// exactly size bytes must follow through Write.
func (s *skillHasher) begin(path string, size int64) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(path)))
	s.h.Write(n[:])
	s.h.Write([]byte(path))
	binary.BigEndian.PutUint64(n[:], uint64(size))
	s.h.Write(n[:])
}

// Write adds content of the current file.
func (s *skillHasher) Write(p []byte) (int, error) { return s.h.Write(p) }

// add adds one whole file.
func (s *skillHasher) add(path string, content []byte) {
	s.begin(path, int64(len(content)))
	s.h.Write(content)
}

func (s *skillHasher) sum() Hash {
	var h Hash
	s.h.Sum(h[:0])
	return h
}

// hashReader returns the SHA-256 of everything r yields.
func hashReader(r io.Reader) (Hash, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return Hash{}, err
	}
	var sum Hash
	h.Sum(sum[:0])
	return sum, nil
}
