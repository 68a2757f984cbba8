package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/all"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/git"
)

// bucketSettings are the settings of a kind config has never heard of:
// a config reads it from the registry alone.
type bucketSettings struct {
	Bucket, Region string
	Retries        int
}

func (s *bucketSettings) Keys() []repository.Key {
	return []repository.Key{{Name: "bucket", Value: &s.Bucket}, {Name: "region", Value: &s.Region}, {Name: "retries", Value: &s.Retries}}
}

func (s *bucketSettings) Resolve(string) (string, error) {
	if s.Region == "" {
		return "", errors.New("region is required")
	}
	return "b-" + s.Bucket, nil
}

func bucketKinds() *repository.Registry {
	return repository.MustRegistry(dir.LocalDriver(), git.Driver(), repository.Driver{
		Kind: "bucket", Keys: []string{"bucket"}, Usage: "bucket: NAME",
		Settings: func() repository.Settings { return &bucketSettings{} },
		Open: func(repository.Spec) (repository.Repository, error) {
			return nil, fmt.Errorf("not opened in this test")
		},
	})
}

func TestANewKindNeedsNoChangeInConfig(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "repositories:\n  - bucket: skills\n    region: eu\n    retries: 3\n    skills: [pdf]\n"), bucketKinds())
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sources[0]
	b, _ := s.Settings.(*bucketSettings)
	if s.Kind != "bucket" || s.Name != "b-skills" || b == nil || b.Region != "eu" || b.Retries != 3 || len(s.Skills) != 1 {
		t.Errorf("source = %+v, settings %+v", s, b)
	}
	for _, tt := range []struct{ text, want string }{
		{"repositories:\n  - bucket: skills\n", ":2: repositories[0]: region is required"},
		{"repositories:\n  - bucket: skills\n    region: eu\n    retries: many\n", `key "retries" in repositories[0]`},
		{"repositories:\n  - name: x\n", "set exactly one of dir: PATH, git: URL or bucket: NAME"},
		{"repositories:\n  - dir: x\n    region: eu\n", "region and retries belong to bucket: sources"},
		{"repositories:\n  - bucket: skills\n    region: eu\n    ref: main\n", "ref, path, depth, auth, allow_inline_credentials and publish belong to git: sources"},
		{"repositories:\n  - bucket: skills\n    region: eu\n    postgres: PG\n", `unknown key "postgres"`},
	} {
		_, err := Load(writeConfig(t, tt.text), bucketKinds())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to say %q", tt.text, err, tt.want)
		}
	}
}

// TestConfigRefusesAnUnknownEmbeddedSet: an embedded: entry naming a skill
// set the program does not lend fails as the config loads, naming the
// file, the line, the name and the names there are, not at every sync.
func TestConfigRefusesAnUnknownEmbeddedSet(t *testing.T) {
	t.Parallel()
	kinds := all.Kinds("builtin", "team")
	for _, tt := range []struct {
		name, text string
		want       []string // substrings of the error after the file; none: it loads
	}{
		{"lent", "repositories:\n  - embedded: builtin\n  - embedded: team\n", nil},
		{"unknown", "strict: true\nrepositories:\n  - embedded: builtin\n  - name: x\n    embedded: foo\n",
			[]string{`:4: repositories[1]: embedded: no skill set named "foo"`, "(it has: builtin, team)"}},
		{"misspelt", "repositories:\n  - embedded: biultin\n", []string{":2: repositories[0]: embedded:", "did you mean builtin?"}},
		{"empty", "repositories:\n  - embedded: \"\"\n", []string{":2: repositories[0]: embedded: is empty", "(it has: builtin, team)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.text)
			cfg, err := Load(path, kinds)
			if len(tt.want) == 0 {
				if err != nil || len(cfg.Sources) != 2 {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if !strings.Contains(err.Error(), path+tt.want[0]) {
				t.Errorf("error %q does not name the file and line as %q", err, path+tt.want[0])
			}
			for _, w := range tt.want[1:] {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
