package lock

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sameDecode checks DecodeFast against encoding/json on data: when it
// accepts data, json.Unmarshal into a new lock succeeds and builds an
// equal one; when it does not, the lock it was given is untouched. It
// returns whether DecodeFast accepted data.
func sameDecode(t testing.TB, data []byte) bool {
	t.Helper()
	fast := New()
	if !fast.DecodeFast(data) {
		if !reflect.DeepEqual(fast, New()) {
			t.Fatalf("DecodeFast gave up on %q but changed the lock: %+v", data, fast)
		}
		return false
	}
	ref := New()
	if err := json.Unmarshal(data, ref); err != nil {
		t.Fatalf("DecodeFast accepted what encoding/json refuses (%v): %q", err, data)
	}
	if !reflect.DeepEqual(fast, ref) {
		t.Fatalf("DecodeFast differs from encoding/json on %q:\nfast %#v\njson %#v", data, fast, ref)
	}
	return true
}

// hexHash is a well-formed skill hash in hex, different for each i.
func hexHash(i int) string { return fmt.Sprintf("%064x", i+1) }

// What Write writes is what DecodeFast reads, and it reads it as
// encoding/json does: a lock of several sources, one of them empty, and
// a name that JSON escapes.
func TestDecodeFastReadsWhatWriteWrites(t *testing.T) {
	t.Parallel()
	lf := New()
	team := &Source{Type: "git", URL: "https://example.com/team.git", Ref: "main", Revision: strings.Repeat("a", 40), Skills: map[string]string{}}
	for i := range 50 {
		team.Skills[fmt.Sprintf("skill-%02d", i)] = hexHash(i)
	}
	team.Skills["ok-<&>"] = hexHash(99) // Write escapes < & > as \u003c ...
	lf.Sources["team"] = team
	lf.Sources["local"] = &Source{Type: "dir", URL: "../skills", Revision: "r", Skills: map[string]string{}}
	lf.Sources["ünï"] = &Source{Type: "git", URL: "https://example.com/u.git", Revision: "b", Skills: map[string]string{"日本": hexHash(7)}}
	path := filepath.Join(t.TempDir(), "skillsync.lock")
	if err := lf.Write(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameDecode(t, data) {
		t.Fatalf("DecodeFast gave up on a lock Write wrote:\n%s", data)
	}
	back, ok, err := Read(path, kinds())
	if err != nil || !ok || !back.Same(lf) {
		t.Fatalf("Read: %v %v, same %v", err, ok, back != nil && back.Same(lf))
	}
}

// DecodeFast builds what encoding/json builds where it accepts, and
// gives up, touching nothing, on anything it is not sure of.
func TestDecodeFastAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	h := hexHash(1)
	for _, tc := range []struct {
		doc  string
		fast bool
	}{
		{`{"version":2,"sources":{"t":{"type":"git","url":"u","ref":"r","revision":"x","skills":{"a":"` + h + `"}}}}`, true},
		{` { "sources" : { } , "version" : 1 } `, true},
		{`{"version":2}`, true},
		{`{}`, true},
		{`{"version":2,"sources":null}`, true},
		{`{"version":null,"sources":{"t":null}}`, true},
		{`{"sources":{"t":{"skills":null,"type":null,"url":null}}}`, true},
		{`{"sources":{"t":{"skills":{"a":null}}}}`, true},
		{`{"sources":{"t\u0041":{"skills":{"\u00e9":"x\n"}}}}`, true},
		{`{"sources":{"t":{"skills":{"a":"\ud800"}}}}`, true},
		{"{\"sources\":{\"t\xff\":{}}}", true},
		// Given up on: encoding/json decides these.
		{`{"version":2,"extra":1}`, false},
		{`{"Version":2}`, false},
		{`{"vers\u0069on":2}`, false},
		{`{"version":2,"version":1}`, false},
		{`{"sources":{},"sources":{}}`, false},
		{`{"sources":{"t":{},"t":{}}}`, false},
		{`{"sources":{"t":{"url":"a","url":"b"}}}`, false},
		{`{"sources":{"t":{"skills":{"a":"1","a":"2"}}}}`, false},
		{`{"sources":{"t":{"skills":{"a":1}}}}`, false},
		{`{"sources":{"t":{"url":true}}}`, false},
		{`{"version":2.0}`, false},
		{`{"version":"2"}`, false},
		{`{"sources":[]}`, false},
		{`{"version":2} x`, false},
		{`{"version":2`, false},
		{`{"sources":{"t":{"url":"a` + "\x01" + `"}}}`, false},
		{`null`, false},
		{`[]`, false},
		{``, false},
	} {
		if got := sameDecode(t, []byte(tc.doc)); got != tc.fast {
			t.Errorf("DecodeFast(%q) accepted %v, want %v", tc.doc, got, tc.fast)
		}
	}
}

// A lock that already holds sources is left to encoding/json, which
// merges into it: DecodeFast only reads into a lock as New makes it.
func TestDecodeFastReadsOnlyIntoANewLock(t *testing.T) {
	t.Parallel()
	lf := New()
	lf.Sources["kept"] = &Source{Type: "git"}
	if lf.DecodeFast([]byte(`{"version":2,"sources":{}}`)) {
		t.Error("DecodeFast read into a lock with sources")
	}
}

// FuzzDecodeFast checks DecodeFast against encoding/json on whatever it
// is given: equal where it accepts, nothing touched where it does not.
func FuzzDecodeFast(f *testing.F) {
	for _, seed := range []string{
		`{"version":2,"sources":{"t":{"type":"git","url":"u","ref":"r","revision":"x","skills":{"a":"b"}}}}`,
		`{"version":2,"sources":{"t":null,"u":{"skills":null}}}`,
		`{"sources":{"t\u0041":{"skills":{"\u00e9":"x\n"}}}}`,
		`{"version":2,"sources":{"t":{"skills":{"a":"1","a":"2"}}}}`,
		`{"version":-0,"sources":{}}`, `{"version":1e3}`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameDecode(t, data) })
}
