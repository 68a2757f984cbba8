package postgres

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/skillsync/skillsync/repository"
)

// Kind is the name of the postgres kind.
const Kind repository.Kind = "postgres"

// Driver returns the postgres kind: a source whose skills live in tables
// of a PostgreSQL database (postgres: ENV_NAME or dsn_file: PATH, with
// schema: and create:).
func Driver() repository.Driver {
	return repository.Driver{
		Kind:     Kind,
		Keys:     []string{"postgres", "dsn_file"},
		Usage:    "postgres: ENV_NAME (or dsn_file: PATH)",
		Settings: func() repository.Settings { return &Settings{} },
		Open:     open,
	}
}

// Settings are a postgres source's keys in the config.
type Settings struct {
	// DSNEnv names the environment variable holding the connection
	// string; DSNFile a file holding it instead.
	DSNEnv  string
	DSNFile string
	Schema  string
	Create  bool
}

// Keys lists the config keys of a postgres source.
func (s *Settings) Keys() []repository.Key {
	return []repository.Key{
		{Name: "postgres", Value: &s.DSNEnv},
		{Name: "dsn_file", Value: &s.DSNFile},
		{Name: "schema", Value: &s.Schema},
		{Name: "create", Value: &s.Create},
	}
}

// Resolve checks that one place holds the connection string, makes the
// file absolute from base and names the source after its schema.
func (s *Settings) Resolve(base string) (string, error) {
	if s.DSNEnv != "" && s.DSNFile != "" {
		return "", fmt.Errorf("set one of postgres: ENV_NAME and dsn_file: PATH, not both")
	}
	if err := repository.Literal(s.DSNFile); err != nil {
		return "", fmt.Errorf("dsn_file: %w", err)
	}
	s.DSNFile = repository.AbsPath(base, s.DSNFile)
	return cmp.Or(s.Schema, "postgres"), nil
}

// Location is where the connection string is, never the string (it is a
// secret), and the schema.
func (s *Settings) Location(base string) (url, ref string) {
	where := "env:" + s.DSNEnv
	if s.DSNFile != "" {
		where = "file:" + relative(base, s.DSNFile)
	}
	return where + " schema:" + cmp.Or(s.Schema, DefaultSchema), ""
}

// Place is where the connection string is and the schema: two entries
// that take one string from one place and read one schema read the same
// tables. It names where the string is, never the string: it is a
// secret.
func (s *Settings) Place() (key, what string) {
	schema := cmp.Or(s.Schema, DefaultSchema)
	if s.DSNFile != "" {
		return "file:" + s.DSNFile + "\x00" + schema, fmt.Sprintf("postgres schema %s of the database dsn_file %s names", schema, s.DSNFile)
	}
	return "env:" + s.DSNEnv + "\x00" + schema, fmt.Sprintf("postgres schema %s of the database $%s names", schema, s.DSNEnv)
}

// relative is path as seen from base, slash-separated; path itself when
// base is "" or path is on another root.
func relative(base, path string) string {
	if base == "" {
		return filepath.ToSlash(path)
	}
	rel, err := filepath.Rel(base, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

func open(sp repository.Spec) (repository.Repository, error) {
	s, ok := sp.Settings.(*Settings)
	if !ok {
		return nil, fmt.Errorf("source %s: the settings of a postgres source are %T", sp.Source, sp.Settings)
	}
	return NewPostgres(PostgresConfig{Source: sp.Source, DSNEnv: s.DSNEnv, DSNFile: s.DSNFile, Schema: s.Schema, Create: s.Create,
		Timeout: sp.Options.Timeout, Logf: sp.Host.Logf}, sp.Options)
}
