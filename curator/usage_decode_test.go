package curator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/layering"
)

// writeUsage has a real Store write a usage file of n records, every
// field set on some of them, and returns its bytes. One record in
// usedEvery has uses and views; the others were only seen.
func writeUsage(t testing.TB, n, usedEvery int) []byte {
	t.Helper()
	s := NewStore(t.TempDir())
	base := time.Date(2026, 9, 1, 8, 30, 0, 0, time.UTC)
	sources := []Source{FromCLI, FromMCP, FromHook, FromImport, FromSlash}
	states := []State{Active, Stale, Archived}
	err := s.Update(context.Background(), func(u *Usage) error {
		for i := 0; i < n; i++ {
			var c Copy
			switch i % 4 {
			case 0:
				c = Copy{Layer: layering.Marketplace, Owner: "team", Name: fmt.Sprintf("skill-%d", i)}
			case 1:
				c = Copy{Layer: layering.Workspace, Name: fmt.Sprintf("skill-%d", i)}
			case 2:
				c = Copy{Layer: layering.User, Owner: "alice", Name: fmt.Sprintf("skill-%d", i)}
			default:
				c = Copy{Layer: layering.Global, Name: fmt.Sprintf("skill-%d", i)}
			}
			sk := u.Skill(c)
			sk.FirstSeenAt = stamp(base) // Seen stamps a whole sync with one instant
			if i%usedEvery != 1 && usedEvery > 1 {
				continue // seen, never used
			}
			at := base.Add(time.Duration(i) * 97 * time.Minute)
			for k := 0; k < i%7; k++ {
				view := k%2 == 1
				if view {
					sk.ViewCount++
					sk.LastViewedAt = stamp(at)
				} else {
					sk.UseCount++
					sk.LastUsedAt = stamp(at)
				}
				sk.count(at, view)
				at = at.Add(26 * time.Hour)
			}
			sk.LastSource = sources[i%len(sources)]
			if st := states[i%len(states)]; st != Active {
				u.SetState(c, st, at)
			}
			sk.Pinned = i%5 == 0
		}
		u.Curator.LastRunAt = stamp(base.Add(time.Hour))
		u.Curator.LastSummary = `checked 3: 1 stale, 0 archived, 0 reactivated; archiving held: "<policy>" & more → later`
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sameDecode checks the fast path against encoding/json on data: when
// fastDecode accepts data, json.Unmarshal into the same starting Usage
// succeeds with version 2 and builds an equal Usage; and decode (fast
// path, then fallback) and decodeJSON (today's path alone) return equal
// usages and the same error or none. It returns whether the fast path
// accepted data.
func sameDecode(t testing.TB, data []byte) bool {
	t.Helper()
	fast, ok := fastDecode(data)
	if ok {
		ref := newUsage()
		ref.Version = 0
		if err := json.Unmarshal(data, ref); err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses (%v): %q", err, data)
		}
		if ref.Version != UsageVersion {
			t.Fatalf("fast path accepted version %d: %q", ref.Version, data)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("fast path differs from encoding/json on %q:\nfast %s\njson %s", data, dump(fast), dump(ref))
		}
	}
	s := NewStore("skills")
	got, gerr := s.decode(data)
	want, werr := s.decodeJSON(data)
	// The messages are not compared: a version-1 file with two bad names
	// names whichever one map iteration meets first, on either path. An
	// error comes only from decodeJSON, on both paths, anyway.
	if (gerr == nil) != (werr == nil) || reflect.TypeOf(gerr) != reflect.TypeOf(werr) {
		t.Fatalf("decode error %v, encoding/json's %v, on %q", gerr, werr, data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decode differs from encoding/json on %q:\nfast %s\njson %s", data, dump(got), dump(want))
	}
	return ok
}

// dump shows a usage with its nil records and days, for a failure.
func dump(u *Usage) string {
	if u == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version %d from %d curator %+v skills(nil=%v):", u.Version, u.from, u.Curator, u.Skills == nil)
	for c, r := range u.Skills {
		if r == nil {
			fmt.Fprintf(&b, " %s=nil", c)
			continue
		}
		fmt.Fprintf(&b, " %s=%+v(days nil=%v)", c, *r, r.Days == nil)
	}
	return b.String()
}

const (
	fast = "fast" // the fast path must accept it
	slow = "slow" // the fast path must give it to encoding/json
	any_ = "any"  // either; only the results are compared
)

// usageCorpus is every kind of input the fast path meets: what Store
// writes, what json accepts that Store never writes, and what json
// refuses.
func usageCorpus(t testing.TB) []struct{ name, data, path string } {
	store := string(writeUsage(t, 60, 1))
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(store)); err != nil {
		t.Fatal(err)
	}
	rec := func(body string) string { return `{"version":2,"skills":{"workspace/pdf":` + body + `}}` }
	return []struct{ name, data, path string }{
		{"store indented", store, fast},
		{"store compact", compact.String(), fast},
		{"store with CRLF and tabs", strings.NewReplacer("\n", "\r\n", "  ", "\t").Replace(store), fast},
		{"store with trailing data", store + "x", slow},
		{"store twice", store + store, slow},
		{"store with a BOM", "\xef\xbb\xbf" + store, slow},
		{"empty skills", `{"version":2,"skills":{}}`, fast},
		{"no skills", `{"version":2}`, fast},
		{"null skills", `{"version":2,"skills":null}`, fast},
		{"null curator", `{"version":2,"curator":null,"skills":{}}`, fast},
		{"imports", `{"version":2,"skills":{},"imports":{"claude":"a1","codex":"b\u00e9","claude":"a2"}}`, fast},
		{"null imports", `{"version":2,"skills":{},"imports":null}`, fast},
		{"imports then null", `{"version":2,"skills":{},"imports":{"claude":"a1"},"imports":null}`, fast},
		{"an import that is no string", `{"version":2,"skills":{},"imports":{"claude":1}}`, slow},
		{"empty record", rec(`{}`), fast},
		{"null record", `{"version":2,"skills":{"workspace/a":null,"workspace/b":{"use_count":1}}}`, fast},
		{"odd whitespace", " \t\r\n{ \"version\" :\t2 ,\r\n\"skills\"\n:\n{ \"global/x\" : { \"pinned\" : true , \"days\" : { } } } }\n\t ", fast},
		{"version last", `{"skills":{"workspace/a":{"use_count":3}},"version":2}`, fast},
		{"all nulls", rec(`{"use_count":null,"view_count":null,"first_seen_at":null,"last_used_at":null,"last_viewed_at":null,"last_source":null,"state":null,"state_since":null,"pinned":null,"days":null}`), fast},
		{"curator fields", `{"version":2,"skills":{},"curator":{"last_run_at":"2026-11-30T12:00:00Z","last_summary":"checked 0"}}`, fast},
		{"curator nulls", `{"version":2,"curator":{"last_run_at":null,"last_summary":null}}`, fast},
		{"every layer", `{"version":2,"skills":{"marketplace:team/a":{},"user:alice/a":{},"workspace/a":{},"global/a":{}}}`, fast},

		// Duplicates: last wins for map keys and fields, maps and structs merge.
		{"duplicate record", `{"version":2,"skills":{"workspace/a":{"use_count":1,"pinned":true},"workspace/a":{"view_count":2}}}`, fast},
		{"record then null", `{"version":2,"skills":{"workspace/a":{"use_count":1},"workspace/a":null}}`, fast},
		{"null then record", `{"version":2,"skills":{"workspace/a":null,"workspace/a":{"use_count":1}}}`, fast},
		{"duplicate field", rec(`{"use_count":1,"use_count":5,"state":"stale","state":null,"pinned":true,"pinned":null}`), fast},
		{"time then null", rec(`{"first_seen_at":"2026-11-30T12:00:00Z","first_seen_at":null}`), fast},
		{"null then time", rec(`{"first_seen_at":null,"first_seen_at":"2026-11-30T12:00:00Z"}`), fast},
		{"time twice", rec(`{"last_used_at":"2026-11-30T12:00:00Z","last_used_at":"2026-12-01T00:00:00+02:00"}`), fast},
		{"days merge", rec(`{"days":{"2026-11-29":{"uses":1},"2026-11-30":{"uses":1}},"days":{"2026-12-01":{"views":2},"2026-11-30":{"views":3}}}`), fast},
		{"days then null", rec(`{"days":{"2026-11-30":{"uses":1}},"days":null}`), fast},
		{"null then days", rec(`{"days":null,"days":{"2026-11-30":{"uses":1}}}`), fast},
		{"empty days", rec(`{"days":{}}`), fast},
		{"null day", rec(`{"days":{"2026-11-30":null}}`), fast},
		{"day fields twice", rec(`{"days":{"2026-11-30":{"uses":1,"uses":null,"views":4,"views":5}}}`), fast},
		{"any day key", rec(`{"days":{"not a day":{"uses":1},"":{}}}`), fast},
		{"skills merge", `{"version":2,"skills":{"workspace/a":{"use_count":1}},"skills":{"workspace/b":{"use_count":2}}}`, fast},
		{"skills then null", `{"version":2,"skills":{"workspace/a":{"use_count":1}},"skills":null}`, fast},
		{"null then skills", `{"version":2,"skills":null,"skills":{"workspace/b":{"use_count":2}}}`, fast},
		{"curator merge", `{"version":2,"curator":{"last_summary":"a"},"curator":{"last_run_at":"2026-11-30T12:00:00Z"},"curator":null}`, fast},
		{"version twice", `{"version":1,"skills":{},"version":2}`, fast},
		{"version 2 then 3", `{"version":2,"skills":{},"version":3}`, slow},
		{"version null", `{"version":2,"version":null}`, fast},

		// Escapes and encodings.
		{"escaped copy key", `{"version":2,"skills":{"workspace\/pdf":{"use_count":1},"workspace/pdf":{"view_count":1}}}`, fast},
		{"unicode escape in copy key", `{"version":2,"skills":{"workspace/p\u0064f":{}}}`, fast},
		{"escaped state", rec(`{"state":"st\u0061le","last_source":"\u0063li"}`), fast},
		{"escaped summary", `{"version":2,"curator":{"last_summary":"\"\u003cx\u003e\" \\ \/ \b\f\n\r\t \ud83d\ude00 \udc00"}}`, fast},
		{"escaped day key", rec(`{"days":{"2026-11-3\u0030":{"uses":1}}}`), fast},
		{"non-ASCII name", `{"version":2,"skills":{"workspace/pdf-ü-日本":{"use_count":1}}}`, fast},
		{"invalid UTF-8 in name", "{\"version\":2,\"skills\":{\"workspace/pdf\xff\":{}}}", any_},
		{"invalid UTF-8 in summary", "{\"version\":2,\"curator\":{\"last_summary\":\"a\xc3(\"}}", fast},
		{"escaped field name", rec(`{"use\u005fcount":4}`), slow},
		{"escaped top-level name", `{"versio\u006e":2}`, slow},
		{"escaped time", rec(`{"first_seen_at":"2026-11-30T12:00:00\u005a"}`), slow},
		{"bad escape", rec(`{"state":"\x"}`), slow},
		{"short unicode escape", rec(`{"state":"\u12"}`), slow},
		{"control character", rec("{\"state\":\"sta\tle\"}"), slow},
		{"control character in summary", "{\"version\":2,\"curator\":{\"last_summary\":\"a\tb\"}}", slow},
		{"control character in day", rec("{\"days\":{\"\x01\":{}}}"), slow},
		{"NUL in name", "{\"version\":2,\"skills\":{\"workspace/a\x00\":{}}}", slow},
		{"unterminated string", `{"version":2,"skills":{"workspace/pdf`, slow},

		// Keys encoding/json matches without case, or ignores.
		{"case-variant field", rec(`{"Use_Count":4,"STATE":"stale"}`), slow},
		{"case-variant state", rec(`{"State":"stale"}`), slow},
		{"case-variant days", rec(`{"Days":{"2026-11-30":{"Uses":1}}}`), slow},
		{"case-variant version", `{"Version":2,"skills":{}}`, slow},
		{"folded field", rec(`{"ſtate":"stale"}`), slow},
		{"unknown record field", rec(`{"use_count":1,"colour":"red"}`), slow},
		{"unknown top-level field", `{"version":2,"skills":{},"extra":[1,{"a":null}]}`, slow},
		{"unknown curator field", `{"version":2,"curator":{"next":1}}`, slow},
		{"unknown day field", rec(`{"days":{"2026-11-30":{"uses":1,"hours":2}}}`), slow},
		{"from field", `{"version":2,"from":1}`, slow},

		// Numbers.
		{"negative counts", rec(`{"use_count":-5,"view_count":-0,"days":{"d":{"uses":-1,"views":0}}}`), fast},
		{"18 digits", rec(`{"use_count":999999999999999999,"view_count":-999999999999999999}`), map[bool]string{true: fast, false: slow}[strconv.IntSize == 64]},
		{"int32 bounds", rec(`{"use_count":2147483647,"view_count":-2147483648}`), fast},
		{"past int32", rec(`{"use_count":2147483648}`), map[bool]string{true: fast, false: slow}[strconv.IntSize == 64]},
		{"19 digits", rec(`{"use_count":1234567890123456789}`), slow},
		{"max int64", rec(`{"use_count":9223372036854775807}`), slow},
		{"overflow", rec(`{"use_count":9223372036854775808}`), slow},
		{"huge", rec(`{"use_count":` + strings.Repeat("9", 400) + `}`), slow},
		{"fraction", rec(`{"use_count":1.0}`), slow},
		{"exponent", rec(`{"use_count":1e3}`), slow},
		{"leading zero", rec(`{"use_count":01}`), slow},
		{"bare minus", rec(`{"use_count":-}`), slow},
		{"plus sign", rec(`{"use_count":+1}`), slow},
		{"version fraction", `{"version":2.0}`, slow},
		{"version exponent", `{"version":2e0}`, slow},

		// Wrong types.
		{"count as string", rec(`{"use_count":"1"}`), slow},
		{"pinned as number", rec(`{"pinned":1}`), slow},
		{"pinned as string", rec(`{"pinned":"true"}`), slow},
		{"state as number", rec(`{"state":5}`), slow},
		{"state as bool", rec(`{"state":true}`), slow},
		{"source as object", rec(`{"last_source":{}}`), slow},
		{"time as number", rec(`{"first_seen_at":5}`), slow},
		{"time as object", rec(`{"first_seen_at":{}}`), slow},
		{"time not RFC 3339", rec(`{"first_seen_at":"yesterday"}`), slow},
		{"time with offset", rec(`{"first_seen_at":"2026-11-30T12:00:00+05:30","state_since":"2026-11-30T12:00:00.123456789-08:00"}`), fast},
		{"days as array", rec(`{"days":[]}`), slow},
		{"day as number", rec(`{"days":{"2026-11-30":1}}`), slow},
		{"record as string", rec(`"x"`), slow},
		{"record as array", rec(`[]`), slow},
		{"record as bool", rec(`false`), slow},
		{"skills as array", `{"version":2,"skills":[]}`, slow},
		{"version as string", `{"version":"2"}`, slow},
		{"curator as string", `{"version":2,"curator":"x"}`, slow},
		{"summary as number", `{"version":2,"curator":{"last_summary":1}}`, slow},
		{"deep nesting", rec(`{"days":{"d":{"uses":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}}`), slow},

		// Values the types refuse.
		{"unknown state", rec(`{"state":"gone"}`), slow},
		{"empty state", rec(`{"state":""}`), fast},
		{"unknown source", rec(`{"last_source":"web"}`), slow},
		{"empty source", rec(`{"last_source":""}`), fast},
		{"dot-dot name", `{"version":2,"skills":{"workspace/..":{}}}`, slow},
		{"path name", `{"version":2,"skills":{"workspace/../x":{}}}`, slow},
		{"no layer", `{"version":2,"skills":{"pdf":{}}}`, slow},
		{"unknown layer", `{"version":2,"skills":{"team:x/pdf":{}}}`, slow},
		{"marketplace without owner", `{"version":2,"skills":{"marketplace/pdf":{}}}`, slow},
		{"workspace with owner", `{"version":2,"skills":{"workspace:x/pdf":{}}}`, slow},
		{"bad key of a null record", `{"version":2,"skills":{"pdf":null}}`, slow},

		// Other versions and documents.
		{"version 1", v1File, slow},
		{"no version", `{"skills":{}}`, slow},
		{"version 3", `{"version":3,"skills":{}}`, slow},
		{"version 0", `{"version":0}`, slow},
		{"negative version", `{"version":-2}`, slow},
		{"empty object", `{}`, slow},
		{"empty input", ``, slow},
		{"whitespace", " \n", slow},
		{"null", `null`, slow},
		{"array", `[]`, slow},
		{"string", `"x"`, slow},

		// Invalid JSON.
		{"trailing comma", `{"version":2,"skills":{},}`, slow},
		{"trailing comma in record", rec(`{"use_count":1,}`), slow},
		{"missing comma", `{"version":2 "skills":{}}`, slow},
		{"missing colon", `{"version" 2}`, slow},
		{"leading comma", `{,"version":2}`, slow},
		{"single quotes", `{'version':2}`, slow},
		{"bad literal", rec(`{"pinned":tru}`), slow},
		{"literal run-on", rec(`{"pinned":truex}`), slow},
		{"null run-on", rec(`{"pinned":nullx}`), slow},
		{"number run-on", rec(`{"use_count":1x}`), slow},
		{"unclosed", `{"version":2,"skills":{}`, slow},
		{"extra close", `{"version":2,"skills":{}}}`, slow},
		{"NUL after", "{\"version\":2}\x00", slow},
		{"form feed space", "{\"version\":2}\f", slow},
	}
}

func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range usageCorpus(t) {
		t.Run(tc.name, func(t *testing.T) {
			ok := sameDecode(t, []byte(tc.data))
			switch {
			case tc.path == fast && !ok:
				t.Errorf("the fast path gave up on %q", tc.data)
			case tc.path == slow && ok:
				t.Errorf("the fast path accepted %q", tc.data)
			}
		})
	}
}

// TestFastDecodeTruncated: no prefix of a file Store wrote is accepted
// unless it is the whole document, and each decodes as encoding/json
// decodes it.
func TestFastDecodeTruncated(t *testing.T) {
	t.Parallel()
	data := writeUsage(t, 7, 1)
	end := strings.LastIndexByte(string(data), '}') + 1
	for n := 0; n <= len(data); n++ {
		ok := sameDecode(t, data[:n])
		if ok != (n >= end) {
			t.Fatalf("fast path on the first %d of %d bytes: %v", n, len(data), ok)
		}
	}
}

// TestFastDecodeTakesStoreFile: what Store writes, and Load reads, goes
// through the fast path, with every field of a record and of the curator
// state set.
func TestFastDecodeTakesStoreFile(t *testing.T) {
	t.Parallel()
	data := writeUsage(t, 400, 1)
	u, ok := fastDecode(data)
	if !ok {
		t.Fatal("the fast path gave up on a file Store wrote")
	}
	sameDecode(t, data)
	var full *SkillUsage
	for _, r := range u.Skills {
		if r.UseCount > 0 && r.ViewCount > 0 && r.FirstSeenAt != nil && r.LastUsedAt != nil && r.LastViewedAt != nil &&
			r.LastSource != "" && r.State != Active && r.StateSince != nil && r.Pinned && len(r.Days) > 1 {
			full = r
			break
		}
	}
	if len(u.Skills) != 400 || full == nil || u.Curator.LastRunAt == nil || !strings.Contains(u.Curator.LastSummary, `"<policy>" & more → later`) {
		t.Fatalf("decoded %d records (one with every field: %v), curator %+v", len(u.Skills), full != nil, u.Curator)
	}
	// Load, the way every command reads usage, gives the same.
	s := NewStore(t.TempDir())
	if err := os.WriteFile(s.Path(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded, finishV2(u)) {
		t.Fatal("Load differs from the fast path")
	}
}

// BenchmarkUsageDecode decodes 2,000 records as Store writes them, through
// decode (the fast path) and through encoding/json alone (decodeJSON, the
// path every command took before). In "seen" one copy in ten was used, as
// in the 372 KB file of issue #25; in "used" every copy was.
func BenchmarkUsageDecode(b *testing.B) {
	s := NewStore("skills")
	for _, file := range []struct {
		name      string
		usedEvery int
	}{{"seen", 10}, {"used", 1}} {
		data := writeUsage(b, 2000, file.usedEvery)
		for _, path := range []struct {
			name   string
			decode func([]byte) (*Usage, error)
		}{{"fast", s.decode}, {"json", s.decodeJSON}} {
			b.Run(file.name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if u, err := path.decode(data); err != nil || len(u.Skills) != 2000 {
						b.Fatalf("decoded %v: %v", u, err)
					}
				}
			})
		}
	}
}
