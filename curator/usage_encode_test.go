package curator

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/skillsync/skillsync/layering"
)

// sameEncode fails t unless encodeUsage gives for u what
// json.MarshalIndent gives, with its final newline, or fails as it does.
func sameEncode(t testing.TB, u *Usage) {
	t.Helper()
	want, werr := json.MarshalIndent(u, "", "  ")
	got, gerr := encodeUsage(u)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("encodeUsage error %v, json.MarshalIndent error %v", gerr, werr)
	}
	if werr != nil {
		if gerr.Error() != werr.Error() {
			t.Fatalf("encodeUsage error %q, json.MarshalIndent error %q", gerr, werr)
		}
		return
	}
	if want = append(want, '\n'); !bytes.Equal(got, want) {
		t.Fatalf("encodeUsage differs from json.MarshalIndent:\n got %s\nwant %s", got, want)
	}
}

// TestEncodeUsageIsMarshalIndent: for every usage the corpus decodes to,
// and for usages built to reach each field, each escape and each error,
// encodeUsage writes the bytes encoding/json writes.
func TestEncodeUsageIsMarshalIndent(t *testing.T) {
	t.Parallel()
	for _, tc := range usageCorpus(t) {
		u := newUsage()
		if json.Unmarshal([]byte(tc.data), u) == nil {
			t.Run(tc.name, func(t *testing.T) { sameEncode(t, u) })
		}
	}
	at := time.Date(2026, 11, 30, 23, 59, 58, 123456789, time.FixedZone("east", 5*3600+30*60))
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	badZone := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("odd", 25*3600))
	pdf := Copy{Layer: layering.Marketplace, Owner: "team", Name: "pdf"}
	full := &SkillUsage{UseCount: -3, ViewCount: 1 << 40, FirstSeenAt: &at, LastUsedAt: &at, LastViewedAt: &at,
		LastSource: FromMCP, State: Stale, StateSince: &at, Pinned: true,
		Days: map[string]DayCount{"2026-11-30": {Uses: 2}, "2026-11-01": {Views: 1}, "2026-10-01": {}, "x<y": {Uses: 1, Views: 2}}}
	for _, tc := range []struct {
		name string
		u    *Usage
	}{
		{"empty", newUsage()},
		{"nil skills", &Usage{Version: 2}},
		{"nil record", &Usage{Version: 2, Skills: map[Copy]*SkillUsage{pdf: nil}}},
		{"zero record", &Usage{Version: 2, Skills: map[Copy]*SkillUsage{pdf: {}}}},
		{"every field", &Usage{Version: 2, Skills: map[Copy]*SkillUsage{pdf: full}, Curator: CuratorState{LastRunAt: &at, LastSummary: "2 stale"},
			Imports: map[string]string{"codex": "b", "claude": "a", "é<": "\x01"}}},
		{"keys sort as text", &Usage{Version: 2, Skills: map[Copy]*SkillUsage{
			{Layer: layering.Workspace, Name: "b"}: {}, {Layer: layering.Workspace, Name: "a-b"}: {},
			{Layer: layering.User, Owner: "z", Name: "a"}: {}, {Layer: layering.Global, Name: "é"}: {},
		}}},
		{"strings to escape", &Usage{Version: 2, Skills: map[Copy]*SkillUsage{pdf: {State: "a\"b\\c<d>&e\x01\u2028é\xff", LastSource: "\t"}},
			Curator: CuratorState{LastSummary: "<script>\n"}}},
		{"an invalid key", &Usage{Version: 2, Skills: map[Copy]*SkillUsage{{Layer: layering.Workspace, Name: "../x"}: {}}}},
		{"a year past 9999", &Usage{Version: 2, Skills: map[Copy]*SkillUsage{pdf: {LastUsedAt: &far}}}},
		{"an offset of a day", &Usage{Version: 2, Curator: CuratorState{LastRunAt: &badZone}}},
	} {
		t.Run(tc.name, func(t *testing.T) { sameEncode(t, tc.u) })
	}
}

// TestEncodeUsageTakesTheFastPath: a file as Store writes it is encoded
// without encoding/json's reflection, or this is no faster.
func TestEncodeUsageTakesTheFastPath(t *testing.T) {
	t.Parallel()
	u := newUsage()
	if err := json.Unmarshal(writeUsage(t, 200, 1), u); err != nil {
		t.Fatal(err)
	}
	if _, ok := appendUsage(nil, u); !ok {
		t.Fatal("a file Store wrote is not encoded by appendUsage")
	}
	sameEncode(t, u)
}

// FuzzUsageEncode: whatever usage a file decodes to, encodeUsage writes
// it as encoding/json does.
func FuzzUsageEncode(f *testing.F) {
	for _, tc := range usageCorpus(f) {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u := newUsage()
		if json.Unmarshal(data, u) != nil {
			return
		}
		sameEncode(t, u)
	})
}

func BenchmarkUsageEncode(b *testing.B) {
	u := newUsage()
	if err := json.Unmarshal(writeUsage(b, 2000, 10), u); err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeUsage(u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.MarshalIndent(u, "", "  "); err != nil {
				b.Fatal(err)
			}
		}
	})
}
