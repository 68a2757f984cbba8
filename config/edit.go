package config

import (
	"bytes"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// AddTarget adds {dir: DIR, mode: copy} to the targets of the config file
// at name, keeping its comments. A target with that dir already there is
// left as it is; added reports whether the file changed.
func AddTarget(name, dir string) (added bool, err error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return false, fmt.Errorf("read config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return false, &Error{File: name, Errs: []error{err}}
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return false, &Error{File: name, Errs: []error{fmt.Errorf("line %d: the config must be a mapping", root.Line)}}
	}
	var targets *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "targets" {
			targets = root.Content[i+1]
		}
	}
	if targets == nil || targets.Kind != yaml.SequenceNode {
		if targets != nil && !(targets.Kind == yaml.ScalarNode && targets.Tag == "!!null") {
			return false, &Error{File: name, Errs: []error{fmt.Errorf("line %d: targets must be a list", targets.Line)}}
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		if targets != nil {
			*targets = *seq
		} else {
			root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "targets"}, seq)
			targets = seq
		}
	}
	for _, t := range targets.Content {
		for i := 0; i+1 < len(t.Content); i += 2 {
			if t.Content[i].Value == "dir" && t.Content[i+1].Value == dir {
				return false, nil
			}
		}
	}
	targets.Content = append(targets.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "dir"}, {Kind: yaml.ScalarNode, Value: dir},
		{Kind: yaml.ScalarNode, Value: "mode"}, {Kind: yaml.ScalarNode, Value: "copy"},
	}})
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return false, err
	}
	return true, atomicfile.WriteFile(name, out.Bytes(), 0o644)
}
