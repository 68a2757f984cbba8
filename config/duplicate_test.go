package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository/all"
)

// TestDuplicateSourcesWarn: two entries that read the same repository at
// the same ref and path, or the same folder, and select skills in common,
// sync those skills twice under two source names. The config loads (it
// did before, and works) with a warning on the later entry's line naming
// the earlier's and what to do. "The same" is what add takes for the same
// (Entry.names): ssh or https, .git and a trailing slash, the host's case,
// and the path's case on github.com, gitlab.com and bitbucket.org. So do
// two entries of one embedded skill set, or of one database schema with
// the connection string from one place. Two entries that select apart are
// deliberate and load without a word.
func TestDuplicateSourcesWarn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       []string // each warning's start, after "FILE", DIR the config's folder; nil: none
	}{
		{"ssh and https", "repositories:\n  - git: https://github.com/acme/skills\n  - git: git@github.com:acme/skills.git\n",
			[]string{`:3: repositories[1] (skills_2) reads the same repository git@github.com:acme/skills.git at the same ref and path as repositories[0] (skills, line 2)`}},
		{"trailing slash and .git", "repositories:\n  - name: a\n    git: https://git.example.com/acme/skills/\n  - name: b\n    git: https://git.example.com/acme/skills.git\n",
			[]string{`:4: repositories[1] (b) reads the same repository https://git.example.com/acme/skills.git at the same ref and path as repositories[0] (a, line 2)`}},
		{"host case", "repositories:\n  - name: a\n    git: https://GIT.Example.com/acme/skills\n  - name: b\n    git: https://git.example.com/acme/skills\n",
			[]string{`:4: repositories[1] (b) reads the same repository`}},
		{"github path case", "repositories:\n  - name: a\n    git: https://github.com/Acme/Skills\n  - name: b\n    git: https://github.com/acme/skills\n",
			[]string{`:4: repositories[1] (b) reads the same repository`}},
		{"gitlab ssh and case", "repositories:\n  - name: a\n    git: git@gitlab.com:Group/Sub/Proj.git\n  - name: b\n    git: https://gitlab.com/group/sub/proj\n",
			[]string{`:4: repositories[1] (b)`}},
		{"same ref and path spelt apart", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    ref: v1\n    path: skills\n  - name: b\n    git: https://github.com/acme/skills\n    ref: v1\n    path: ./skills/\n",
			[]string{`:6: repositories[1] (b) reads the same repository https://github.com/acme/skills at the same ref and path as repositories[0] (a, line 2)`}},
		{"skills in common", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    skills: [pdf, docx]\n  - name: b\n    git: https://github.com/acme/skills\n    skills: [PDF]\n",
			[]string{`:5: repositories[1] (b)`}},
		{"a glob and a name it matches", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    skills: [pdf-*]\n  - name: b\n    git: https://github.com/acme/skills\n    skills: [pdf-reader]\n",
			[]string{`:5: repositories[1] (b)`}},
		{"every skill and one", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n  - name: b\n    git: https://github.com/acme/skills\n    skills: [pdf]\n",
			[]string{`:4: repositories[1] (b)`}},
		{"every skill but others", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    exclude: [pdf]\n  - name: b\n    git: https://github.com/acme/skills\n    exclude: [docx]\n",
			[]string{`:5: repositories[1] (b)`}},
		{"a plugin in common", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    plugins: [dev]\n  - name: b\n    git: https://github.com/acme/skills\n    plugins: [docs, Dev]\n",
			[]string{`:5: repositories[1] (b)`}},
		{"a plugin and the whole source", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    plugins: [dev]\n  - name: b\n    git: https://github.com/acme/skills\n",
			[]string{`:5: repositories[1] (b)`}},
		{"the same folder", "repositories:\n  - name: a\n    dir: team\n  - name: b\n    dir: ./team/\n",
			[]string{`:4: repositories[1] (b) reads the same folder DIR/team as repositories[0] (a, line 2), and selects skills it selects too`}},
		{"the same folder, unnamed", "repositories:\n  - dir: team\n  - dir: x/../team\n",
			[]string{`:3: repositories[1] (team_2) reads the same folder `}},
		{"three of one", "repositories:\n  - name: a\n    dir: team\n  - name: b\n    dir: other\n  - name: c\n    dir: team\n  - name: d\n    dir: team\n",
			[]string{`:6: repositories[2] (c) reads the same folder `, `:8: repositories[3] (d) reads the same folder `}},
		{"the same embedded set", "repositories:\n  - name: a\n    embedded: builtin\n  - name: b\n    embedded: builtin\n",
			[]string{`:4: repositories[1] (b) reads the same embedded skill set builtin as repositories[0] (a, line 2), and selects skills it selects too`}},
		{"the same embedded set, unnamed", "repositories:\n  - embedded: team\n  - embedded: team\n    skills: [pdf]\n",
			[]string{`:3: repositories[1] (team_2) reads the same embedded skill set team as repositories[0] (team, line 2)`}},
		{"the same database variable and schema", "repositories:\n  - name: a\n    postgres: PG\n  - name: b\n    postgres: PG\n    schema: skillsync\n",
			[]string{`:4: repositories[1] (b) reads the same postgres schema skillsync of the database $PG names as repositories[0] (a, line 2)`}},
		{"the same database file and schema", "repositories:\n  - name: a\n    dsn_file: secrets/pg\n    schema: team\n  - name: b\n    dsn_file: ./secrets//pg\n    schema: team\n",
			[]string{`:5: repositories[1] (b) reads the same postgres schema team of the database dsn_file DIR/secrets/pg names as repositories[0] (a, line 2)`}},
		{"after an entry that fails to name", "repositories:\n  - name: a\n    dir: team\n  - name: A\n    dir: team\n",
			nil}, // an error: two names alike
		{"self-hosted path case", "repositories:\n  - name: a\n    git: https://git.example.com/Acme/Skills\n  - name: b\n    git: https://git.example.com/acme/skills\n", nil},
		{"another ref", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    ref: v1\n  - name: b\n    git: https://github.com/acme/skills\n    ref: v2\n", nil},
		{"a ref and the default branch", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    ref: main\n  - name: b\n    git: https://github.com/acme/skills\n", nil},
		{"another path", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    path: skills\n  - name: b\n    git: https://github.com/acme/skills\n    path: Skills\n", nil},
		{"skills apart", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    skills: [pdf]\n  - name: b\n    git: https://github.com/acme/skills\n    skills: [docx]\n", nil},
		{"the rest and one", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    exclude: [pdf]\n  - name: b\n    git: https://github.com/acme/skills\n    skills: [pdf]\n", nil},
		{"plugins apart", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    plugins: [dev]\n  - name: b\n    git: https://github.com/acme/skills\n    plugins: [docs]\n", nil},
		{"two globs as written", "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n    skills: [pdf-*]\n  - name: b\n    git: https://github.com/acme/skills\n    skills: [\"*-tools\"]\n", nil},
		{"other repositories", "repositories:\n  - git: https://github.com/acme/skills\n  - git: https://github.com/acme/more-skills\n", nil},
		{"other folders", "repositories:\n  - name: a\n    dir: team\n  - name: b\n    dir: team2\n", nil},
		{"a folder and its git", "repositories:\n  - name: a\n    dir: team\n  - name: b\n    git: ./team\n", nil},
		{"other embedded sets", "repositories:\n  - embedded: builtin\n  - embedded: team\n", nil},
		{"an embedded set's skills apart", "repositories:\n  - name: a\n    embedded: builtin\n    skills: [pdf]\n  - name: b\n    embedded: builtin\n    skills: [docx]\n", nil},
		{"a folder and an embedded set of one name", "repositories:\n  - name: a\n    dir: builtin\n  - name: b\n    embedded: builtin\n", nil},
		{"other database schemas", "repositories:\n  - name: a\n    postgres: PG\n  - name: b\n    postgres: PG\n    schema: team\n", nil},
		{"other database variables", "repositories:\n  - name: a\n    postgres: PG\n  - name: b\n    postgres: PG_TEAM\n", nil},
		{"other database files", "repositories:\n  - name: a\n    dsn_file: pg\n  - name: b\n    dsn_file: pg2\n", nil},
		{"a database variable and a file of its name", "repositories:\n  - name: a\n    postgres: PG\n  - name: b\n    dsn_file: PG\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			cfg, err := Load(path, all.Kinds())
			if tt.name == "after an entry that fails to name" {
				if err == nil || strings.Contains(err.Error(), "reads the same") {
					t.Fatalf("err = %v, want the error of two names alike alone", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", cfg.Warnings, len(tt.want))
			}
			for i, w := range tt.want {
				got := cfg.Warnings[i]
				if w = path + strings.ReplaceAll(w, "DIR/", filepath.Dir(path)+string(filepath.Separator)); !strings.HasPrefix(got, w) {
					t.Errorf("warning %q does not start with %q", got, w)
				}
				if !strings.Contains(got, "; remove one of the two entries, or give them ") {
					t.Errorf("warning %q does not say what to do", got)
				}
			}
		})
	}
}

// TestDuplicateSourceWarningHidesSecrets: the warning names the remote
// without its credentials, as every message does.
func TestDuplicateSourceWarningHidesSecrets(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "repositories:\n  - name: a\n    git: https://github.com/acme/skills\n  - name: b\n    git: https://bot:s3cret@github.com/acme/skills.git\n    allow_inline_credentials: true\n")
	cfg, err := Load(path, all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || strings.Contains(cfg.Warnings[0], "s3cret") || !strings.Contains(cfg.Warnings[0], "github.com/acme/skills.git") {
		t.Errorf("warnings = %q, want one, without the password", cfg.Warnings)
	}
}
