package repository

import "testing"

// located is settings with a location and a folder, as a git source's.
type located struct{}

func (located) Keys() []Key                           { return nil }
func (located) Resolve(string) (string, error)        { return "x", nil }
func (located) Location(base string) (string, string) { return "https://example.com/" + base, "main" }
func (located) Fingerprint() string                   { return "path=skills" }

// TestSpecFingerprint: the digests a cache records stay what earlier
// versions wrote (the values below are theirs), so an upgrade does not
// read and write every source again; any setting that changes what a
// source yields changes them.
func TestSpecFingerprint(t *testing.T) {
	t.Parallel()
	o := Options{Strict: true, MaxSkillSize: 1000, Include: []string{"b", "A"}, Exclude: []string{"x"}}
	s := Spec{Source: "team", Kind: "git", Settings: located{}, Options: o}
	if got, want := s.Fingerprint("/ws"), "80f3cc7ef1cbe63b35c99d27ca165139"; got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
	if got, want := o.DiscoveryKey(), "bd129e3c0c6fd38a3f707c0cdc6a0478"; got != want {
		t.Errorf("DiscoveryKey = %s, want %s", got, want)
	}
	plain := Spec{Source: "plain", Kind: "dir", Options: Options{Strict: true, MaxSkillSize: 1000}}
	if got, want := plain.Fingerprint("/ws"), "76fec3ec98e5c5a11d590e4e1322017d"; got != want {
		t.Errorf("Fingerprint without settings = %s, want %s", got, want)
	}
	if got, want := plain.Options.DiscoveryKey(), "343e3686424a381c70462e2ce73f9976"; got != want {
		t.Errorf("DiscoveryKey without a selection = %s, want %s", got, want)
	}
	moved := s
	moved.Options.Exclude = nil
	for what, other := range map[string]Spec{"kind": {Kind: "dir", Settings: located{}, Options: o}, "options": moved} {
		if other.Fingerprint("/ws") == s.Fingerprint("/ws") {
			t.Errorf("a different %s has the same fingerprint", what)
		}
	}
	if s.Fingerprint("/elsewhere") == s.Fingerprint("/ws") {
		t.Error("a different location has the same fingerprint")
	}
}
