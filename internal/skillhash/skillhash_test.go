package skillhash

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// file is one file of a test skill.
type file struct{ path, content string }

func hashOf(files []file) string {
	h := New()
	for _, f := range files {
		h.Add(f.path, int64(len(f.content)), sha256.Sum256([]byte(f.content)))
	}
	sum := h.Sum()
	return hex.EncodeToString(sum[:])
}

// The hash is on disk in locks, records and the registry: a change to
// how it is computed must fail here, not pass unnoticed into every
// team's lock file. The values were computed once, by hand, from the
// layout the package comment gives:
//
//	printf 'skillsync skill hash 2\n' > h
//	printf '\0\0\0\0\0\0\0\x08SKILL.md\0\0\0\0\0\0\0\x01' >> h
//	printf a | sha256sum | xxd -r -p >> h
//	sha256sum h
func TestKnownValues(t *testing.T) {
	tests := []struct {
		name  string
		files []file
		want  string
	}{
		{"no files", nil, "589c952ea25f9a71b008412024b4cfb7acc57363e26676c9f10840383b342103"},
		{"one file", []file{{"SKILL.md", "a"}}, "bdf65b69e676a2eda269b90fe7fae5828f030b31b2936368417dcdc333c27da9"},
		{"two files", []file{{"SKILL.md", "a"}, {"scripts/run.sh", "#!/bin/sh\n"}}, "aa4c711a5d7321353216a0c99dd59293333fe11a4f7a92a330cfdac4b7baa000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hashOf(tt.files); got != tt.want {
				t.Errorf("hash %s, want %s", got, tt.want)
			}
		})
	}
}

// Skills that differ in any path, size or byte differ in hash, however
// the bytes shift between the fields.
func TestDistinct(t *testing.T) {
	skills := [][]file{
		{{"SKILL.md", "ab"}},
		{{"SKILL.md", "ab"}, {"x", ""}},
		{{"SKILL.mda", "b"}},
		{{"SKILL.md", "a"}, {"b", ""}},
		{{"SKILL.md", "ba"}},
		{{"a", "SKILL.md"}},
		{},
	}
	seen := map[string]int{}
	for i, s := range skills {
		h := hashOf(s)
		if j, ok := seen[h]; ok {
			t.Errorf("skills %d and %d share hash %s", j, i, h)
		}
		seen[h] = i
	}
}
