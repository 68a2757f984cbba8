package repository

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Fingerprint digests every setting of the source s describes that
// changes what it yields (its kind, where it is as Locator says from base,
// the folder read inside it, its options), so that a config change is a
// change: the source is read and materialized again even at the same
// revision. The cache records it; it must not change between versions.
func (s Spec) Fingerprint(base string) string {
	var url, ref string
	if l, ok := s.Settings.(Locator); ok {
		url, ref = l.Location(base)
	}
	var folder string // the folder read inside the source, for a kind that has one
	if f, ok := s.Settings.(interface{ Fingerprint() string }); ok {
		folder = f.Fingerprint()
	}
	h := sha256.New()
	for _, part := range []string{string(s.Kind), url, ref, folder, s.Options.Fingerprint()} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// DiscoveryKey digests the options that decide what a skill's content is
// read as (strictness, discovery rules, limits, selection): skill records
// made under the same key stand for reading the same content again,
// whatever the ref, commit or path the source is at.
func (o Options) DiscoveryKey() string {
	sum := sha256.Sum256([]byte(o.Fingerprint()))
	return hex.EncodeToString(sum[:16])
}
