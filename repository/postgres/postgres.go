package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skillsync/skillsync/internal/pgschema"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// DefaultSchema is the schema a Postgres source uses when the config names
// none.
const DefaultSchema = "skillsync"

// ErrNoTables is returned when the schema of a Postgres source has no
// skillsync tables and the source may not create them.
var ErrNoTables = errors.New("the schema has no skillsync tables: set create: true on the source to create them")

// ErrSchemaVersion is returned when the tables of a Postgres source were
// made by another version of skillsync.
var ErrSchemaVersion = errors.New("schema version mismatch")

// ErrDSN is returned when the connection string of a Postgres source
// cannot be read or parsed. Its message never holds the string.
var ErrDSN = errors.New("no usable connection string")

// PostgresConfig describes one Postgres source. Exactly one of DSNEnv and
// DSNFile names where the connection string is: it is a secret, read when
// the source first connects and never shown.
type PostgresConfig struct {
	Source string
	// DSNEnv is the name of the environment variable holding the
	// connection string (config key postgres:).
	DSNEnv string
	// DSNFile is a file holding the connection string (config key
	// dsn_file:).
	DSNFile string
	// Schema holds the tables; "" is DefaultSchema. It must be a plain
	// lower-case identifier: [a-z_][a-z0-9_]*, at most 63 bytes.
	Schema string
	// Create makes the source create its schema and tables when they are
	// missing, and migrate them when they are older. Without it a missing
	// table is ErrNoTables.
	Create bool
	// Timeout bounds each operation: a sync, a read of the skills, a
	// publish; 0 is DefaultTimeout.
	Timeout time.Duration
	// SpoolDir is where the temporary copy of the source's files is made;
	// "" is the system's temporary directory.
	SpoolDir string
	// Tracer, when set, sees every query the source runs.
	Tracer pgx.QueryTracer
	// Logf receives Listen's messages about lost connections; nil
	// discards them.
	Logf func(format string, args ...any)
}

// validSchemaName reports whether s is a schema name skillsync accepts:
// ^[a-z_][a-z0-9_]{0,62}$, checked by hand, as a compiled regexp cost
// every start of the CLI a millisecond.
func validSchemaName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Postgres is a source whose skills live in tables of a PostgreSQL
// database. Each top-level entry of the source is a row of the skills
// table, named by its name, with its files in the files table; the source
// is read as the tree of those entries, with the discovery every adapter
// shares.
//
// Sync costs one query. Skills reads one consistent snapshot into a spool
// directory on local disk and serves the files from there; Close removes
// it. Publish and Delete write one skill in one transaction, and Listen
// reports every change as it commits.
type Postgres struct {
	cfg    PostgresConfig
	opts   repository.Options
	schema string // quoted identifier

	poolMu  sync.Mutex
	pool    *pgxpool.Pool
	secrets []string // the DSN and its password, redacted from every error

	readMu sync.Mutex // serializes Skills: it owns tree and spool
	tree   *pgTree
	spool  string
}

// NewPostgres returns a Postgres source. It checks the config but does not
// connect: nothing is read until the first operation.
func NewPostgres(cfg PostgresConfig, opts repository.Options) (*Postgres, error) {
	if cfg.Schema == "" {
		cfg.Schema = DefaultSchema
	}
	if !validSchemaName(cfg.Schema) {
		return nil, fmt.Errorf("source %s: schema %q is not a plain lower-case identifier ([a-z_][a-z0-9_]*, at most 63 bytes)", cfg.Source, cfg.Schema)
	}
	if (cfg.DSNEnv == "") == (cfg.DSNFile == "") {
		return nil, fmt.Errorf("source %s: set exactly one of postgres: (an environment variable holding the connection string) and dsn_file:", cfg.Source)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = repository.DefaultTimeout
	}
	return &Postgres{cfg: cfg, opts: opts, schema: pgx.Identifier{cfg.Schema}.Sanitize()}, nil
}

// Source returns the source's name.
func (p *Postgres) Source() string { return p.cfg.Source }

// Location describes where the source is without its secret: where the
// connection string comes from, and the schema.
func (p *Postgres) Location() string {
	from := "$" + p.cfg.DSNEnv
	if p.cfg.DSNFile != "" {
		from = "file " + p.cfg.DSNFile
	}
	return "postgres, dsn from " + from + ", schema " + p.cfg.Schema
}

// Sync returns the source's revision. It runs exactly one query, which
// also checks the schema's version, and reads nothing else: comparing its
// result with the recorded revision is the cheap update check.
func (p *Postgres) Sync(ctx context.Context) (repository.Revision, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	pool, err := p.connect(ctx)
	if err != nil {
		return "", err
	}
	var rev repository.Revision
	err = p.withSchema(ctx, pool, func() error {
		rev, err = p.revision(ctx, pool)
		return err
	})
	if err != nil {
		return "", p.fail("read revision", err)
	}
	return rev, nil
}

// Skills reads the source's newest snapshot and discovers its skills. The
// files of the returned skills stay readable until the next call of Skills
// or Close. The snapshot may be newer than the revision Sync returned,
// never older; SkillsRevision says which revision it is.
func (p *Postgres) Skills(ctx context.Context) ([]skill.Skill, []skill.Problem, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	p.readMu.Lock()
	defer p.readMu.Unlock()
	tree, err := p.snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	skills, problems, err := repository.Discover(ctx, &pgFS{tree: tree}, p.cfg.Source, p.cfg.Source, p.opts)
	if err != nil {
		return nil, nil, p.fail("discover skills", err)
	}
	return skills, append(append([]skill.Problem(nil), tree.problems...), problems...), nil
}

// SkillsRevision returns the revision of the snapshot the last Skills read, or ""
// before the first.
func (p *Postgres) SkillsRevision() repository.Revision {
	p.readMu.Lock()
	defer p.readMu.Unlock()
	if p.tree == nil {
		return ""
	}
	return p.tree.revision
}

// Close closes the connections and removes the spool, after which the
// files of skills returned by Skills can no longer be read.
func (p *Postgres) Close() error {
	p.poolMu.Lock()
	if p.pool != nil {
		p.pool.Close()
		p.pool = nil
	}
	p.poolMu.Unlock()
	p.readMu.Lock()
	defer p.readMu.Unlock()
	p.tree = nil
	if p.spool == "" {
		return nil
	}
	err := os.RemoveAll(p.spool)
	p.spool = ""
	return err
}

// connect returns the connection pool, made on first use. It does not
// connect yet: the pool connects when a query needs it.
func (p *Postgres) connect(ctx context.Context) (*pgxpool.Pool, error) {
	p.poolMu.Lock()
	defer p.poolMu.Unlock()
	if p.pool == nil {
		dsn, err := p.readDSN()
		if err != nil {
			return nil, fmt.Errorf("source %s (%s): %w", p.cfg.Source, p.Location(), err)
		}
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			// pgx's message quotes the string, redacted only as well as
			// it can guess where a password is: say nothing of it.
			return nil, fmt.Errorf("source %s (%s): %w: it is neither key=value pairs nor a postgres:// URL that parses", p.cfg.Source, p.Location(), ErrDSN)
		}
		secrets := []string{dsn, cfg.ConnConfig.Password}
		cfg.MaxConns = 4
		cfg.ConnConfig.Tracer = p.cfg.Tracer
		if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > p.cfg.Timeout {
			cfg.ConnConfig.ConnectTimeout = p.cfg.Timeout
		}
		if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
			cfg.ConnConfig.RuntimeParams["application_name"] = "skillsync"
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, repository.RedactError(fmt.Errorf("source %s (%s): connect: %w", p.cfg.Source, p.Location(), err), secrets...)
		}
		p.pool, p.secrets = pool, secrets
	}
	return p.pool, nil
}

// maxDSNFile bounds what is read of a dsn_file.
const maxDSNFile = 64 << 10

// readDSN returns the connection string from the environment or the file.
// Its errors name where it was looked for, never what was found.
func (p *Postgres) readDSN() (string, error) {
	if p.cfg.DSNEnv != "" {
		dsn := strings.TrimSpace(p.opts.Env.Getenv(p.cfg.DSNEnv))
		if dsn == "" {
			return "", fmt.Errorf("%w: environment variable %s is not set or empty", ErrDSN, p.cfg.DSNEnv)
		}
		return dsn, nil
	}
	f, err := os.Open(p.cfg.DSNFile)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrDSN, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDSNFile+1))
	if err != nil {
		return "", fmt.Errorf("%w: read %s: %v", ErrDSN, p.cfg.DSNFile, err)
	}
	if len(data) > maxDSNFile {
		return "", fmt.Errorf("%w: %s is over %d bytes", ErrDSN, p.cfg.DSNFile, maxDSNFile)
	}
	dsn := strings.TrimSpace(string(data))
	if dsn == "" {
		return "", fmt.Errorf("%w: %s is empty", ErrDSN, p.cfg.DSNFile)
	}
	return dsn, nil
}

// fail wraps err with the source, what failed and where, with every
// secret of the connection string removed from the message, and a missing
// table explained.
func (p *Postgres) fail(op string, err error) error {
	p.poolMu.Lock()
	defer p.poolMu.Unlock()
	return p.failLocked(op, err)
}

func (p *Postgres) failLocked(op string, err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000") && !errors.Is(err, ErrNoTables) {
		// undefined_table, invalid_schema_name
		err = fmt.Errorf("%w (%s)", ErrNoTables, pgErr.Message)
	}
	if pgschema.Foreign(err) {
		err = fmt.Errorf("schema %s holds tables skillsync did not make, or that were changed by hand (%w): set schema: of source %s to a schema of skillsync's own", p.cfg.Schema, err, p.cfg.Source)
	}
	return repository.RedactError(fmt.Errorf("source %s (%s): %s: %w", p.cfg.Source, p.Location(), op, err), p.secrets...)
}

// querier is what a pool, a connection and a transaction share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// revision reads the source's revision and checks the schema version, in
// one query.
func (p *Postgres) revision(ctx context.Context, q querier) (repository.Revision, error) {
	var (
		value    int64
		registry string
		version  *int32
	)
	err := q.QueryRow(ctx, "SELECT r.value, r.registry::text, (SELECT max(version) FROM "+p.schema+".schema_migrations) FROM "+p.schema+".revision r").
		Scan(&value, &registry, &version)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errors.New("the revision table has no row: the schema was altered by hand")
	}
	if err != nil {
		return "", err
	}
	if err := p.checkVersion(version); err != nil {
		return "", err
	}
	return formatRevision(value, registry), nil
}

// formatRevision renders a revision as its counter and the first twelve
// hex digits of the registry's random id, as the bump function does in
// SQL: two databases whose counters agree still differ.
func formatRevision(value int64, registry string) repository.Revision {
	id := strings.ReplaceAll(registry, "-", "")
	if len(id) > 12 {
		id = id[:12]
	}
	return repository.Revision(fmt.Sprintf("%d-%s", value, id))
}

var _ repository.Repository = (*Postgres)(nil)
