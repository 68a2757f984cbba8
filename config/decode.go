package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

// fields maps the keys a YAML mapping may hold to where their values go:
// a pointer that yaml.v3 decodes into, or a nested decoder that reports
// its own errors with their lines.
type fields map[string]any

// nested decodes a value that is itself a mapping or a list of mappings.
type nested func(n *yaml.Node) []error

// hinted is a field whose value, when it is of the wrong type, is
// refused with what a right one looks like: want ("a number of bytes,
// such as 10485760 (10 MiB)").
type hinted struct {
	ptr  any
	want string
}

// keyLines maps the keys of one mapping to the lines they stand on, for
// the messages that check a value once every key is read.
type keyLines map[string]int

// at is the line of key, else the line of its section (or 0).
func (l keyLines) at(key string, section int) int {
	if n, ok := l[key]; ok {
		return n
	}
	return section
}

// decodeMapping decodes the mapping n into fields. Every unknown key and
// every value of the wrong type is an error naming its line and key; all
// of them are returned together, so one run shows every mistake.
func decodeMapping(n *yaml.Node, where string, f fields) []error {
	_, errs := decodeMappingLines(n, where, f)
	return errs
}

// decodeMappingLines is decodeMapping that also returns the line of every
// key it met.
func decodeMappingLines(n *yaml.Node, where string, f fields) (keyLines, []error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, []error{fmt.Errorf("line %d: %s must be a mapping of keys to values", n.Line, where)}
	}
	var errs []error
	seen := keyLines{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ptr, ok := f[k.Value]
		if !ok {
			errs = append(errs, fmt.Errorf("line %d: unknown key %q in %s (known: %s)", k.Line, k.Value, where, knownKeys(f)))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			errs = append(errs, fmt.Errorf("line %d: key %q in %s repeats line %d", k.Line, k.Value, where, prev))
			continue
		}
		seen[k.Value] = k.Line
		if dec, ok := ptr.(nested); ok {
			errs = append(errs, dec(v)...)
			continue
		}
		want := ""
		if h, ok := ptr.(hinted); ok {
			ptr, want = h.ptr, "; "+k.Value+" is "+h.want
		}
		if msg := decodeValue(k.Value, v, ptr); msg != "" {
			errs = append(errs, fmt.Errorf("line %d: key %q in %s: %s%s", k.Line, k.Value, where, msg, want))
		}
	}
	return seen, errs
}

// decodeValue decodes v into ptr, and returns what is wrong with it in a
// user's words, "" when nothing is. A fraction for a whole number is
// refused: yaml.v3 would cut 1.5 to 1 without a word (1e6 is taken). A
// number in quotes is a string to YAML, which yaml.v3 calls a number out
// of range; key names the fix.
func decodeValue(key string, v *yaml.Node, ptr any) string {
	if v.Kind == yaml.ScalarNode && v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && wholeNumber(ptr) && digits().MatchString(v.Value) {
		return fmt.Sprintf("%q is a string, not a number: write %s: %s without quotes", v.Value, key, v.Value)
	}
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!float" && wholeNumber(ptr) {
		var f float64
		switch err := v.Decode(&f); {
		case err != nil || f != math.Trunc(f):
			return fmt.Sprintf("%q is not a whole number", v.Value)
		case f < math.MinInt64:
			// yaml.v3 would make it the smallest int64.
			return fmt.Sprintf("%q is too small a number here", v.Value)
		}
	}
	if err := v.Decode(ptr); err != nil {
		return yamlMessage(err)
	}
	return ""
}

// wholeNumber reports whether ptr leads to an integer that is no
// duration (yaml.v3 refuses a number for a duration itself).
func wholeNumber(ptr any) bool {
	t := reflect.TypeOf(ptr)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == reflect.TypeFor[time.Duration]() {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// decodeList decodes a sequence, each item with item; an empty value
// (null) is an empty list.
func decodeList(n *yaml.Node, where string, item func(i int, n *yaml.Node) []error) []error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // a key with every item commented out: an empty list
	}
	if n.Kind != yaml.SequenceNode {
		return []error{fmt.Errorf("line %d: %s must be a list", n.Line, where)}
	}
	var errs []error
	for i, v := range n.Content {
		errs = append(errs, item(i, v)...)
	}
	return errs
}

func knownKeys(f fields) string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// yamlLinePrefix is compiled at its first use, not at every start of the
// CLI.
var yamlLinePrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(yaml: )?(unmarshal errors:\s*)?(line \d+: )?`)
})

// yamlMessage strips the prefixes yaml.v3 puts on its errors: the caller
// already says where.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = plainType(yamlLinePrefix().ReplaceAllString(m, ""))
		}
		return strings.Join(msgs, "; ")
	}
	return yamlLinePrefix().ReplaceAllString(err.Error(), "")
}

// digits matches a whole number, as yaml.v3 quotes one that does not fit.
var digits = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?[0-9_]+$`) })

// yamlTypeError reads yaml.v3's words for a value of the wrong type.
var yamlTypeError = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")

// plainType says a value of the wrong type in a user's words, with the
// fix: yaml.v3 speaks of tags and Go types.
func plainType(msg string) string {
	m := yamlTypeError.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, want := m[2], m[3]
	if value == "" {
		// A list or a mapping: yaml.v3 does not quote it.
		return fmt.Sprintf("a %s is not %s here", tagWords(m[1]), goTypeWords(want))
	}
	switch {
	case want == "time.Duration":
		return fmt.Sprintf("%q is not a duration: give a number with a unit, as 30s, 10m or 720h (30 days)", value)
	case want == "bool":
		return fmt.Sprintf("%q is not true or false", value)
	case strings.HasPrefix(want, "int"), strings.HasPrefix(want, "uint"):
		if digits().MatchString(strings.TrimSuffix(value, "...")) {
			// yaml.v3 says no more of a long value than its start.
			if strings.HasPrefix(value, "-") {
				return fmt.Sprintf("%q is too small a number here", value)
			}
			return fmt.Sprintf("%q is too large a number here", value)
		}
		return fmt.Sprintf("%q is not a whole number", value)
	case strings.HasPrefix(want, "[]"):
		return fmt.Sprintf("%q is not a list: write [a, b] or one item per line after a -", value)
	case strings.HasPrefix(want, "map["), strings.HasPrefix(want, "struct"):
		return fmt.Sprintf("%q is not a mapping of keys to values", value)
	}
	return fmt.Sprintf("%q is not a %s", value, want)
}

// goTypeWords names a Go type as a user sees the value it wants.
func goTypeWords(t string) string {
	switch {
	case t == "string":
		return "a single value"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"):
		return "a mapping"
	case t == "time.Duration":
		return "a duration"
	}
	return "a " + t
}

// tagWords names a YAML tag as a user sees the value.
func tagWords(tag string) string {
	switch tag {
	case "seq":
		return "list"
	case "map":
		return "mapping"
	}
	return tag
}
