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
			msgs[i] = yamlLinePrefix().ReplaceAllString(m, "")
		}
		return strings.Join(msgs, "; ")
	}
	return yamlLinePrefix().ReplaceAllString(err.Error(), "")
}
