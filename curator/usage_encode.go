package curator

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// encodeUsage returns the bytes the usage file holds for u: exactly what
// json.MarshalIndent(u, "", "  ") gives, with a final newline. Every use
// rewrites the file, 372 KB for 2,000 skills, and encoding/json's
// reflection spent as long on it as reading it did. Anything this does
// not write the way encoding/json would (a copy key that does not
// validate, a time it refuses, a string to escape) is handed to
// encoding/json: for a key or a time, the whole file, so the error is
// the one it always was; for a string, that string alone.
// TestEncodeUsageIsMarshalIndent and FuzzUsageEncode hold the two equal.
func encodeUsage(u *Usage) ([]byte, error) {
	b, ok := appendUsage(make([]byte, 0, 256*len(u.Skills)+256), u)
	if !ok {
		data, err := json.MarshalIndent(u, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(data, '\n'), nil
	}
	return append(b, '\n'), nil
}

// usageKey is one record's key as encoding/json sorts it.
type usageKey struct {
	text string
	rec  *SkillUsage
}

func appendUsage(b []byte, u *Usage) ([]byte, bool) {
	b = append(b, "{\n  \"version\": "...)
	b = strconv.AppendInt(b, int64(u.Version), 10)
	b = append(b, ",\n  \"skills\": "...)
	if u.Skills == nil {
		b = append(b, "null"...)
	} else {
		keys := make([]usageKey, 0, len(u.Skills))
		for c, rec := range u.Skills {
			if c.Validate() != nil {
				return nil, false
			}
			keys = append(keys, usageKey{c.String(), rec})
		}
		slices.SortFunc(keys, func(a, b usageKey) int { return strings.Compare(a.text, b.text) })
		if len(keys) == 0 {
			b = append(b, "{}"...)
		} else {
			b = append(b, '{')
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, "\n    "...)
				b = appendString(b, k.text)
				b = append(b, ": "...)
				var ok bool
				if b, ok = appendRecord(b, k.rec); !ok {
					return nil, false
				}
			}
			b = append(b, "\n  }"...)
		}
	}
	b = append(b, ",\n  \"curator\": "...)
	b, ok := appendCurator(b, &u.Curator)
	if !ok {
		return nil, false
	}
	if len(u.Imports) > 0 {
		b = append(b, ",\n  \"imports\": {"...)
		for i, agent := range slices.Sorted(maps.Keys(u.Imports)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    "...)
			b = appendString(b, agent)
			b = append(b, ": "...)
			b = appendString(b, u.Imports[agent])
		}
		b = append(b, "\n  }"...)
	}
	return append(b, "\n}"...), true
}

// field starts one field of an object at indent (its closing brace's
// indent is two spaces less): a comma after the field before, a new line,
// the indent and the name.
func field(b []byte, first *bool, indent, name string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = append(b, '\n')
	b = append(b, indent...)
	b = append(b, '"')
	b = append(b, name...)
	return append(b, "\": "...)
}

// closeObject ends an object whose fields were written at indent; one
// without fields is {}.
func closeObject(b []byte, empty bool, indent string) []byte {
	if empty {
		return append(b, '}')
	}
	b = append(b, '\n')
	b = append(b, indent[:len(indent)-2]...)
	return append(b, '}')
}

func appendRecord(b []byte, r *SkillUsage) ([]byte, bool) {
	if r == nil {
		return append(b, "null"...), true
	}
	const in = "      "
	first := true
	b = append(b, '{')
	b = field(b, &first, in, "use_count")
	b = strconv.AppendInt(b, int64(r.UseCount), 10)
	b = field(b, &first, in, "view_count")
	b = strconv.AppendInt(b, int64(r.ViewCount), 10)
	var ok bool
	for _, t := range []struct {
		name string
		at   *time.Time
	}{{"first_seen_at", r.FirstSeenAt}, {"last_used_at", r.LastUsedAt}, {"last_viewed_at", r.LastViewedAt}} {
		if t.at == nil {
			continue
		}
		b = field(b, &first, in, t.name)
		if b, ok = appendTime(b, *t.at); !ok {
			return nil, false
		}
	}
	if r.LastSource != "" {
		b = field(b, &first, in, "last_source")
		b = appendString(b, string(r.LastSource))
	}
	b = field(b, &first, in, "state")
	b = appendString(b, string(r.State))
	if r.StateSince != nil {
		b = field(b, &first, in, "state_since")
		if b, ok = appendTime(b, *r.StateSince); !ok {
			return nil, false
		}
	}
	b = field(b, &first, in, "pinned")
	b = strconv.AppendBool(b, r.Pinned)
	if len(r.Days) > 0 {
		b = field(b, &first, in, "days")
		b = appendDays(b, r.Days)
	}
	return closeObject(b, first, in), true
}

func appendDays(b []byte, days map[string]DayCount) []byte {
	const in, inner = "        ", "          "
	b = append(b, '{')
	for i, day := range slices.Sorted(maps.Keys(days)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, in...)
		b = appendString(b, day)
		b = append(b, ": {"...)
		c, first := days[day], true
		if c.Uses != 0 {
			b = field(b, &first, inner, "uses")
			b = strconv.AppendInt(b, int64(c.Uses), 10)
		}
		if c.Views != 0 {
			b = field(b, &first, inner, "views")
			b = strconv.AppendInt(b, int64(c.Views), 10)
		}
		b = closeObject(b, first, inner)
	}
	b = append(b, '\n')
	b = append(b, in[:len(in)-2]...)
	return append(b, '}')
}

func appendCurator(b []byte, c *CuratorState) ([]byte, bool) {
	const in = "    "
	first := true
	b = append(b, '{')
	if c.LastRunAt != nil {
		b = field(b, &first, in, "last_run_at")
		var ok bool
		if b, ok = appendTime(b, *c.LastRunAt); !ok {
			return nil, false
		}
	}
	if c.LastSummary != "" {
		b = field(b, &first, in, "last_summary")
		b = appendString(b, c.LastSummary)
	}
	return closeObject(b, first, in), true
}

// appendTime writes t as time.Time's MarshalJSON does; false when that
// would fail (a year past 9999, an offset of a day or more).
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return nil, false
	}
	return append(b, '"'), true
}

// appendString writes s quoted. Printable ASCII needs no escape; any
// other string is quoted by encoding/json, which escapes <, > and &, the
// control characters, U+2028 and U+2029, and invalid UTF-8 its own way.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
