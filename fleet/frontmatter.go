package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// SetRollout returns SKILL.md with metadata.rollout set to percent and,
// when envs is not nil, metadata.environments set to them (an empty list
// removes the key). The body and the other keys are kept; the frontmatter
// is written again by the YAML encoder, comments included.
func SetRollout(skillMD []byte, percent float64, envs []string) ([]byte, error) {
	if percent < 0 || percent > 100 {
		return nil, fmt.Errorf("rollout %v%%: want 0%% to 100%%", percent)
	}
	text := string(skillMD)
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		rest, ok = strings.CutPrefix(text, "---\r\n")
	}
	if !ok {
		return nil, errors.New("SKILL.md has no frontmatter")
	}
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return nil, errors.New("SKILL.md's frontmatter is not closed")
	}
	front, body := rest[:end+1], rest[end+1:]
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		return nil, fmt.Errorf("SKILL.md's frontmatter: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("SKILL.md's frontmatter is not a mapping")
	}
	meta := child(doc.Content[0], "metadata", yaml.MappingNode)
	if meta == nil {
		return nil, errors.New("SKILL.md's metadata is not a mapping")
	}
	setScalar(meta, RolloutKey, FormatPercent(percent))
	if envs != nil {
		if len(envs) == 0 {
			remove(meta, EnvironmentsKey)
		} else {
			setScalar(meta, EnvironmentsKey, strings.Join(envs, " "))
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc.Content[0]); err != nil {
		return nil, err
	}
	return []byte("---\n" + buf.String() + strings.TrimPrefix(body, "\n")), nil
}

// child returns the value of key in mapping m, adding an empty one of
// kind when it is missing; nil when it is there with another kind.
func child(m *yaml.Node, key string, kind yaml.Kind) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				*v = yaml.Node{Kind: kind}
			}
			if v.Kind != kind {
				return nil
			}
			return v
		}
	}
	v := &yaml.Node{Kind: kind}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v
}

func setScalar(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Value: value, Style: yaml.DoubleQuotedStyle}
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Value: value, Style: yaml.DoubleQuotedStyle})
}

func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
