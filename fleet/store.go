// Package fleet is the fleet store on PostgreSQL: every host of a team
// pushes its heartbeat (version, environment, each source's revision and
// last sync result) and its usage records there, and fleet status, fleet
// usage and curation on fleet data are queries over it. Rollout
// membership (rollout.go) is a pure function and needs no store.
//
// A push is idempotent: a host sends absolute counters per copy, the
// store keeps the largest it has seen and adds only the difference to the
// per-day buckets, in one transaction serialized per host. The same state
// sent twice, or a retry after a lost answer, counts nothing twice.
//
// Everyone holding the connection string may report; nothing a row says is
// trusted: names, copy keys, counts, times and sizes are checked when
// written and again when read, and a hostile row is skipped with a
// warning. The connection string never appears in an error.
package fleet

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

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/pgschema"
)

// ErrDSN is returned when the connection string cannot be read or parsed.
var ErrDSN = errors.New("no usable fleet connection string")

// ErrSchemaVersion is returned when the schema is missing, older than this
// skillsync (without create: true) or newer.
var ErrSchemaVersion = errors.New("fleet schema version")

// ErrClockSkew is returned by a push from a host whose clock runs more
// than MaxSkew from the store server's.
var ErrClockSkew = errors.New("host clock skew")

// Config says where the store is.
type Config struct {
	// DSNEnv names an environment variable holding the connection string;
	// DSNFile a file holding it. Exactly one is set.
	DSNEnv, DSNFile string
	// Schema holds the tables; a plain lower-case identifier.
	Schema string
	// Create creates or migrates the schema when it is missing or older.
	Create bool
	// Timeout bounds connecting; 0 means 10s.
	Timeout time.Duration
	// MaxConns bounds the pool; 0 means 4.
	MaxConns int32
	// Warn receives what is skipped (a hostile row); nil drops it.
	Warn func(string)
	// Env is the environment DSNEnv is read from; the zero Env is the
	// process's.
	Env hostenv.Env
	// FoldEvery is how many pushes with records there are, on average,
	// to one fold of the usage rollups' deltas (Store.Fold); 0 means
	// 64, a negative number never.
	FoldEvery int
	// Now is this machine's clock, for a default window (nil: time.Now);
	// every check of a time a host reported uses the server's, as this
	// machine's may run behind.
	Now func() time.Time
}

// ServerTime is the time on the database server's clock, by which the
// store checks the times hosts report.
func (s *Store) ServerTime(ctx context.Context) (time.Time, error) {
	if err := s.ready(ctx); err != nil {
		return time.Time{}, err
	}
	var now time.Time
	if err := s.pool.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
		return time.Time{}, s.fail("read the server's time", err)
	}
	return now, nil
}

// now is the time on this machine's clock (Config.Now).
func (s *Store) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// Store is an open fleet store. Its methods are safe for concurrent use.
type Store struct {
	cfg     Config
	schema  string // quoted
	pool    *pgxpool.Pool
	secrets []string

	migrateOnce sync.Mutex
	migrated    bool

	// folds are the folds pushes started (Push), for Close to wait.
	folds sync.WaitGroup
}

// Open reads the connection string and makes a pool. It does not connect
// yet: the first query does.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if (cfg.DSNEnv == "") == (cfg.DSNFile == "") {
		return nil, fmt.Errorf("fleet: %w: set exactly one of postgres: and dsn_file:", ErrDSN)
	}
	if !validSchema(cfg.Schema) {
		return nil, fmt.Errorf("fleet: schema %q is not a plain lower-case identifier", cfg.Schema)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	dsn, err := readDSN(cfg.Env, cfg.DSNEnv, cfg.DSNFile)
	if err != nil {
		return nil, fmt.Errorf("fleet (%s): %w", cfg.location(), err)
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes the string: say nothing of it.
		return nil, fmt.Errorf("fleet (%s): %w: it is neither key=value pairs nor a postgres:// URL that parses", cfg.location(), ErrDSN)
	}
	s := &Store{cfg: cfg, schema: pgx.Identifier{cfg.Schema}.Sanitize(), secrets: []string{dsn, pc.ConnConfig.Password}}
	pc.MaxConns = 4
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	if pc.ConnConfig.ConnectTimeout == 0 || pc.ConnConfig.ConnectTimeout > cfg.Timeout {
		pc.ConnConfig.ConnectTimeout = cfg.Timeout
	}
	if _, ok := pc.ConnConfig.RuntimeParams["application_name"]; !ok {
		pc.ConnConfig.RuntimeParams["application_name"] = "skillsync-fleet"
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, s.fail("connect", err)
	}
	s.pool = pool
	return s, nil
}

// Close waits for a fold a push started, then closes the pool.
func (s *Store) Close() {
	s.folds.Wait()
	if s.pool != nil {
		s.pool.Close()
	}
}

// Location says where the store is without the secret: the variable or
// file the connection string comes from, and the schema.
func (s *Store) Location() string { return s.cfg.location() }

// Identity names the database and schema the store writes to, without a
// secret: the server, its port, the database and the schema. A host's
// pushed file keeps it, so a push to another store sends everything.
func (s *Store) Identity() string {
	c := s.pool.Config().ConnConfig
	return fmt.Sprintf("postgres %s:%d/%s schema %s", c.Host, c.Port, c.Database, s.cfg.Schema)
}

func (c Config) location() string {
	from := "$" + c.DSNEnv
	if c.DSNFile != "" {
		from = "file " + c.DSNFile
	}
	return "postgres, dsn from " + from + ", schema " + c.Schema
}

// maxDSNFile bounds what is read of a dsn_file.
const maxDSNFile = 64 << 10

// ReadDSN returns the connection string from the environment variable env
// or the file file. Its errors name where it was looked for, never what
// was found.
func ReadDSN(env, file string) (string, error) {
	return readDSN(hostenv.Env{}, env, file)
}

// readDSN is ReadDSN reading the variable from vars.
func readDSN(vars hostenv.Env, env, file string) (string, error) {
	if env != "" {
		dsn := strings.TrimSpace(vars.Getenv(env))
		if dsn == "" {
			return "", fmt.Errorf("%w: environment variable %s is not set or empty", ErrDSN, env)
		}
		return dsn, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrDSN, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDSNFile+1))
	if err != nil {
		return "", fmt.Errorf("%w: read %s: %v", ErrDSN, file, err)
	}
	if len(data) > maxDSNFile {
		return "", fmt.Errorf("%w: %s is over %d bytes", ErrDSN, file, maxDSNFile)
	}
	dsn := strings.TrimSpace(string(data))
	if dsn == "" {
		return "", fmt.Errorf("%w: %s is empty", ErrDSN, file)
	}
	return dsn, nil
}

// fail wraps err with what failed and where, with every secret of the
// connection string removed from the message.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000") {
		fix := "set create: true in fleet: to create them"
		if s.cfg.Create {
			// The schema was made, or found at this version, and has lost a
			// table since: creating finds nothing to do.
			fix = "the schema is at this skillsync's version but lacks it (dropped by hand?); restore it, or drop the schema for create: true to make it again"
		}
		err = fmt.Errorf("%w: the fleet tables are missing (%s): %s", ErrSchemaVersion, pgErr.Message, fix)
	}
	if pgschema.Foreign(err) {
		err = fmt.Errorf("%w: schema %s holds tables skillsync did not make, or that were changed by hand (%v): set schema: in fleet: to a schema of skillsync's own",
			ErrSchemaVersion, s.cfg.Schema, err)
	}
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "42P10" || pgErr.Code == "42883":
			// no unique constraint for ON CONFLICT (a primary key
			// dropped), undefined_function (sat, fold_rollups dropped)
			err = fmt.Errorf("%w: schema %s was changed by hand: a key or function skillsync made is gone (%v): restore it as fleet/schema.go makes it, or move the data to a schema that create: true makes again",
				ErrSchemaVersion, s.cfg.Schema, err)
		case pgErr.Code == "42501":
			err = fmt.Errorf("%w: the role of the connection string lacks a privilege on schema %s: grant it USAGE on the schema, SELECT, INSERT, UPDATE and DELETE on its tables and EXECUTE on its functions (reading needs SELECT only), or connect as the role that owns them",
				err, s.cfg.Schema)
		case pgErr.Code == "57014" && strings.Contains(pgErr.Message, "statement timeout"):
			err = fmt.Errorf("%w: the server's statement_timeout for this role ended it: raise it for the role (ALTER ROLE ... SET statement_timeout), or put options=-c%%20statement_timeout=0 in the connection string",
				err)
		}
	}
	return redact(fmt.Errorf("fleet (%s): %s: %w", s.cfg.location(), op, err), s.secrets)
}

func (s *Store) warn(format string, args ...any) {
	if s.cfg.Warn != nil {
		s.cfg.Warn(redact(fmt.Errorf(format, args...), s.secrets).Error())
	}
}

// redactedError keeps the chain (errors.Is still sees a context deadline
// or ErrSchemaVersion) under a message without the secrets.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redact(err error, secrets []string) error {
	msg := err.Error()
	changed := false
	for _, sec := range secrets {
		if sec != "" && strings.Contains(msg, sec) {
			msg, changed = strings.ReplaceAll(msg, sec, "***"), true
		}
	}
	if !changed {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

func validSchema(s string) bool {
	if s == "" || len(s) > 63 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// IsUnreachable reports whether err says the store could not be reached
// (as opposed to refusing what was sent): a push that fails so leaves the
// usage local for the next one.
func IsUnreachable(err error) bool {
	if err == nil || errors.Is(err, ErrDSN) || errors.Is(err, ErrSchemaVersion) || errors.Is(err, ErrClockSkew) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// connection exceptions (08), the server shutting down or
		// refusing (57P0x), too many connections (53300)
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P0") || pgErr.Code == "53300"
	}
	return true
}
