package config

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// fields maps the keys a YAML mapping may hold to where their values go:
// a pointer that yaml.v3 decodes into, or a nested decoder that reports
// its own errors with their lines.
type fields map[string]any

// nested decodes a value that is itself a mapping or a list of mappings.
type nested func(n *yaml.Node) []error

// decodeMapping decodes the mapping n into fields. Every unknown key and
// every value of the wrong type is an error naming its line and key; all
// of them are returned together, so one run shows every mistake.
func decodeMapping(n *yaml.Node, where string, f fields) []error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return []error{fmt.Errorf("line %d: %s must be a mapping of keys to values", n.Line, where)}
	}
	var errs []error
	seen := map[string]int{}
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
		if err := v.Decode(ptr); err != nil {
			errs = append(errs, fmt.Errorf("line %d: key %q in %s: %s", k.Line, k.Value, where, yamlMessage(err)))
		}
	}
	return errs
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
