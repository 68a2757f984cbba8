package lock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oneComponent reports whether name, joined to dir, names a direct child
// of dir and nothing else: the use sync makes of every name in a lock.
func oneComponent(dir, name string) bool {
	p := filepath.Join(dir, name)
	return name != "" && name != "." && name != ".." && filepath.Dir(p) == dir && filepath.Base(p) == name &&
		!strings.ContainsAny(name, "/\\\x00") && !strings.HasPrefix(name, ".")
}

// FuzzLockRead feeds skillsync.lock files to Read. A lock is committed to
// git, so it is hostile input: whatever Read accepts names no source or
// skill that could leave the folder it is joined to, and what it accepts
// survives a Write and a Read unchanged.
func FuzzLockRead(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"sources":{"team":{"type":"git","url":"https://example.com/team.git","revision":"abc","skills":{"pdf":"00"}}}}`,
		`{"version":1,"sources":{}}`,
		`{"version":1}`,
		`{"version":1,"sources":{"../../victim":{"type":"dir","revision":"x","skills":{}}}}`,
		`{"version":1,"sources":{"team":{"revision":"x","skills":{"../x":"00","a/b":"00","..":"00"}}}}`,
		`{"version":1,"sources":{"team":{"revision":"x","skills":{".hidden":"00","a\\b":"00","\u0000":"00"}}}}`,
		`{"version":1,"sources":{".":{"revision":"x"},"":{"revision":"y"}}}`,
		`{"version":1,"sources":{"team":null}}`,
		`{"version":1,"sources":{"t\u202eam":{"revision":"x","skills":{"p\u001bdf":"00"}}}}`,
		`{"version":2,"sources":{"../x":{}}}`,
		`{"version":1,"sources":{"team":{"revision":"x","skills":{"` + strings.Repeat("a", 256) + `":"00"}}}}`,
		`[]`, `null`, `{"version":"1"}`, "\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		name := filepath.Join(dir, "skillsync.lock")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lf, ok, err := Read(name, kinds())
		if err != nil {
			if lf != nil || ok {
				t.Fatalf("Read failed (%v) yet returned a lock", err)
			}
			return
		}
		if !ok || lf == nil || lf.Sources == nil {
			t.Fatalf("Read of an existing file: ok %v, lock %+v", ok, lf)
		}
		base := filepath.Join(dir, "cache")
		for source, s := range lf.Sources {
			if !oneComponent(base, source) {
				t.Fatalf("source name %q leaves its folder", source)
			}
			if s == nil {
				t.Fatalf("source %q has no record", source)
			}
			for sk := range s.Skills {
				if !oneComponent(filepath.Join(base, source), sk) {
					t.Fatalf("skill name %q of source %q leaves its folder", sk, source)
				}
			}
		}
		again := filepath.Join(dir, "again.lock")
		if err := lf.Write(again); err != nil {
			t.Fatalf("write what Read accepted: %v", err)
		}
		back, ok, err := Read(again, kinds())
		if err != nil || !ok {
			t.Fatalf("read back what Write wrote: %v", err)
		}
		if len(back.Sources) != len(lf.Sources) {
			t.Fatalf("round trip: %d sources, then %d", len(lf.Sources), len(back.Sources))
		}
		for source, s := range lf.Sources {
			b := back.Sources[source]
			if b == nil || b.Revision != s.Revision || b.URL != s.URL || b.Type != s.Type || len(b.Skills) != len(s.Skills) {
				t.Fatalf("round trip changed source %q: %+v -> %+v", source, s, b)
			}
			for sk, h := range s.Skills {
				if b.Skills[sk] != h {
					t.Fatalf("round trip changed skill %s/%s", source, sk)
				}
			}
		}
	})
}

// TestHostileLockIsRefused: the names a hostile lock carries make Read
// refuse the whole file, saying which name and what to do.
func TestHostileLockIsRefused(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		`{"version":1,"sources":{"../../victim":{"revision":"x","skills":{}}}}`,
		`{"version":1,"sources":{"team":{"revision":"x","skills":{"../x":"00"}}}}`,
		`{"version":1,"sources":{"team":{"revision":"x","skills":{"a/b":"00"}}}}`,
		`{"version":1,"sources":{"team":null}}`,
	} {
		name := filepath.Join(t.TempDir(), "skillsync.lock")
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Read(name, kinds())
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "delete it and run skillsync sync") {
			t.Errorf("%s: %v", data, err)
		}
	}
}

// TestLockTextIsChecked: a lock whose URL, revision or hash is not what
// skillsync writes (a control character a terminal would act on, a hash
// that is not hex, an unknown kind) is refused, not printed.
func TestLockTextIsChecked(t *testing.T) {
	t.Parallel()
	good := strings.Repeat("ab", 32)
	for _, body := range []string{
		`{"version":1,"sources":{"team":{"type":"git","url":"x\u001b]0;PWNED\u0007","revision":"r","skills":{}}}}`,
		`{"version":1,"sources":{"team":{"type":"git","revision":"\u001b[2J","skills":{}}}}`,
		`{"version":1,"sources":{"team":{"type":"git","revision":"r","skills":{"pdf":"not-hex"}}}}`,
		`{"version":1,"sources":{"team":{"type":"sftp","revision":"r","skills":{}}}}`,
	} {
		name := filepath.Join(t.TempDir(), "skillsync.lock")
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Read(name, kinds()); err == nil {
			t.Errorf("accepted %s", body)
		}
	}
	name := filepath.Join(t.TempDir(), "skillsync.lock")
	if err := os.WriteFile(name, []byte(`{"version":1,"sources":{"team":{"type":"git","url":"https://x/y.git","revision":"abc","skills":{"pdf":"`+good+`"}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Read(name, kinds()); err != nil || !ok {
		t.Errorf("a good lock: %v", err)
	}
}
