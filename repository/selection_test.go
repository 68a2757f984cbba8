package repository_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

func TestSelectIsUsableOutsideDiscovery(t *testing.T) {
	t.Parallel()
	skills := []skill.Skill{
		{Name: "pdf"}, {Name: "pdf-extract"}, {Name: "docs"},
		{Name: "secret", Metadata: map[string]string{"internal": "true"}},
		{Path: "broken-dir"}, // no name: matched by its directory
	}
	opts := repository.Options{Include: []string{"pdf*", "secret", "broken-*", "xlsx"}, Exclude: []string{"pdf-extract"}}
	kept, problems := opts.Select(skills)
	var got []string
	for _, s := range kept {
		got = append(got, s.Name+s.Path)
	}
	if !slices.Equal(got, []string{"pdf", "secret", "broken-dir"}) {
		t.Errorf("Select kept %v", got)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Message, `"xlsx"`) || problems[0].Rule != "skill-not-found" {
		t.Errorf("problems %v, want one skill-not-found for xlsx", problems)
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	base := repository.Options{Include: []string{"b", "A"}, Exclude: []string{"x"}}
	same := []repository.Options{
		{Include: []string{"a", "b", "a"}, Exclude: []string{"X"}},
		{Include: []string{"b", "A"}, Exclude: []string{"x"}, MaxSkillSize: repository.DefaultMaxSkillSize, MaxEntries: repository.DefaultMaxEntries},
		{Include: []string{"b", "A"}, Exclude: []string{"x"}, Timeout: 5},
	}
	for _, o := range same {
		if o.Fingerprint() != base.Fingerprint() {
			t.Errorf("%+v: fingerprint %q differs from %q", o, o.Fingerprint(), base.Fingerprint())
		}
	}
	different := []repository.Options{
		{Include: []string{"b"}, Exclude: []string{"x"}},
		{Include: []string{"b", "A"}},
		{Include: []string{"b", "A"}, Exclude: []string{"x"}, Strict: true},
		{Include: []string{"b", "A"}, Exclude: []string{"x"}, MaxFileSize: 1},
		{Include: []string{"b", "A"}, Exclude: []string{"x"}, MaxSkillSize: 1},
		{Include: []string{"b", "A"}, Exclude: []string{"x"}, MaxSourceSize: -1},
		{Include: []string{"b", "A"}, Exclude: []string{"x"}, MaxEntries: 10},
		{Include: []string{"b,a"}, Exclude: []string{"x"}},
	}
	for _, o := range different {
		if o.Fingerprint() == base.Fingerprint() {
			t.Errorf("%+v: fingerprint equals the base's %q", o, base.Fingerprint())
		}
	}
}

func TestValidateRefusesBadPatterns(t *testing.T) {
	t.Parallel()
	if err := (repository.Options{Include: []string{"pdf-*", "docs"}, Exclude: []string{"x?"}}).Validate(); err != nil {
		t.Errorf("valid patterns refused: %v", err)
	}
	for _, o := range []repository.Options{{Include: []string{"[pdf"}}, {Exclude: []string{""}}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
