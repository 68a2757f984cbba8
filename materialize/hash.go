package materialize

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/skillsync/skillsync/internal/skillhash"
)

// Hash is a SHA-256 digest: of one file, or of a whole skill
// (internal/skillhash). Records hold it as lower-case hex.
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

// filesHash is the hash of a skill whose files are as recorded.
func filesHash(files map[string]FileRecord) Hash {
	h := skillhash.New()
	for _, p := range sortedNames(files) {
		h.Add(p, files[p].Size, files[p].SHA256)
	}
	return h.Sum()
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
