package postgres_test

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/internal/testmain"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/postgres"
	"github.com/skillsync/skillsync/repository/repositorytest"
	"github.com/skillsync/skillsync/skill"
)

// pgCluster is the PostgreSQL server of this test binary, started by the
// first test that needs it.
var pgCluster pgtest.Shared

func TestMain(m *testing.M) {
	testmain.Setup()
	code := m.Run()
	if err := pgCluster.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the postgres cluster:", err)
	}
	os.Exit(code)
}

// pgSource is a Postgres source of one test, in a schema of its own.
type pgSource struct {
	*postgres.Postgres
	cluster *pgtest.Cluster
	cfg     postgres.PostgresConfig
	spool   string
}

// newPostgres makes a source over a fresh schema named after the test, its
// tables created.
func newPostgres(t *testing.T, opts repository.Options, tune ...func(*postgres.PostgresConfig)) *pgSource {
	t.Helper()
	c := pgCluster.Get(t)
	schema := pgtest.Name(t)
	pgtest.Exec(t, c, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	cfg := postgres.PostgresConfig{Source: "team", DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Create: true, SpoolDir: t.TempDir()}
	for _, f := range tune {
		f(&cfg)
	}
	s := pgOpen(t, c, cfg, opts)
	if cfg.Create {
		if _, err := s.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// pgOpen returns another source over the same config, as another process
// would have.
func pgOpen(t *testing.T, c *pgtest.Cluster, cfg postgres.PostgresConfig, opts repository.Options) *pgSource {
	t.Helper()
	p, err := postgres.NewPostgres(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &pgSource{Postgres: p, cluster: c, cfg: cfg, spool: cfg.SpoolDir}
}

// loadRaw writes files into the tables as a writer that is not skillsync
// would: the first element of each path is the entry, the rest the file's
// path in it, nothing validated. The whole load is one transaction.
func (s *pgSource) loadRaw(t *testing.T, files map[string]repositorytest.File) {
	t.Helper()
	ctx := context.Background()
	tx := pgtest.Begin(t, s.cluster)
	schema := s.cfg.Schema
	for name, f := range files {
		entry, rest, _ := strings.Cut(name, "/")
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+schema+".skills (name) VALUES ($1) ON CONFLICT DO NOTHING", entry); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+schema+".files (skill, path, mode, content) VALUES ($1, $2, $3, $4)",
			entry, rest, int32(mode), []byte(f.Data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// pgRevNumber is the counter of a Postgres revision.
func pgRevNumber(t *testing.T, rev repository.Revision) int64 {
	t.Helper()
	num, _, ok := strings.Cut(string(rev), "-")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil {
		t.Fatalf("revision %q is not COUNTER-ID", rev)
	}
	return n
}

// pgSkillFS is a skill directory to publish.
func pgSkillFS(name, desc string, extra map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{"SKILL.md": {Data: []byte(skilltest.SkillMD(name, desc))}}
	for p, data := range extra {
		fsys[p] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
	}
	return fsys
}

// pgContents reads every file of every skill: name/path -> content.
func pgContents(t *testing.T, skills []skill.Skill) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range skills {
		for _, f := range s.FileList() {
			data, err := fs.ReadFile(s.Files, f.Path)
			if err != nil {
				t.Fatalf("read %s/%s: %v", s.Name, f.Path, err)
			}
			out[s.Name+"/"+f.Path] = string(data)
		}
	}
	return out
}

func pgSkills(t *testing.T, r repository.Repository) ([]skill.Skill, []skill.Problem) {
	t.Helper()
	skills, problems, err := r.Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return skills, problems
}

func TestPostgresConformance(t *testing.T) {
	t.Parallel()
	repositorytest.Run(t, func(t *testing.T, files map[string]repositorytest.File, opts repository.Options) repository.Repository {
		s := newPostgres(t, opts)
		s.loadRaw(t, files)
		if _, err := s.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	}, true)
}

// TestPostgresSkillFS runs the standard FS checks on a skill's files.
func TestPostgresSkillFS(t *testing.T) {
	t.Parallel()
	s := newPostgres(t, repository.Options{})
	s.loadRaw(t, repositorytest.Fixture())
	skills, _ := pgSkills(t, s)
	i := slices.IndexFunc(skills, func(s skill.Skill) bool { return s.Name == "pdf" })
	if err := fstest.TestFS(skills[i].Files, "SKILL.md", "scripts/extract.sh", "references/format.md", "nested/SKILL.md"); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresPublishUpdateDelete follows a source through its life: a
// first sync, an update, a publish that changes nothing, a deletion.
func TestPostgresPublishUpdateDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newPostgres(t, repository.Options{})
	start, err := s.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	script := pgSkillFS("pdf", "Read PDF files.", map[string]string{"references/format.md": "format v1\n", "old.txt": "old\n"})
	script["scripts/extract.sh"] = &fstest.MapFile{Data: []byte("#!/bin/sh\n"), Mode: 0o755}
	r1, err := s.PublishSkill(ctx, "pdf", script, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishSkill(ctx, "docs", pgSkillFS("docs", "Write documentation.", nil), "bob"); err != nil {
		t.Fatal(err)
	}
	synced, err := s.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pgRevNumber(t, r1) != pgRevNumber(t, start)+1 || pgRevNumber(t, synced) != pgRevNumber(t, start)+2 {
		t.Fatalf("revisions %s, %s, %s: want one step per publish", start, r1, synced)
	}
	skills, problems := pgSkills(t, s)
	if len(problems) > 0 {
		t.Errorf("problems: %v", problems)
	}
	got := pgContents(t, skills)
	if got["pdf/references/format.md"] != "format v1\n" || got["docs/SKILL.md"] == "" || len(got) != 5 {
		t.Errorf("first sync read %v", got)
	}
	for _, f := range skills[slices.IndexFunc(skills, func(s skill.Skill) bool { return s.Name == "pdf" })].FileList() {
		if f.Path == "scripts/extract.sh" && f.Mode.Perm() != 0o755 {
			t.Errorf("extract.sh has mode %v", f.Mode)
		}
	}
	if s.SkillsRevision() != synced {
		t.Errorf("SkillsRevision() = %s, want %s", s.SkillsRevision(), synced)
	}

	// An update: one file changed, one removed, one added.
	delete(script, "old.txt")
	script["references/format.md"] = &fstest.MapFile{Data: []byte("format v2\n")}
	script["new.txt"] = &fstest.MapFile{Data: []byte("new\n")}
	r2, err := s.PublishSkill(ctx, "pdf", script, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if same, err := s.PublishSkill(ctx, "pdf", script, "carol"); err != nil || same != r2 {
		t.Errorf("publishing the same files again = %s, %v; want the unchanged revision %s", same, err, r2)
	}
	if rev, _ := s.Sync(ctx); rev != r2 {
		t.Errorf("Sync after the update = %s, want %s", rev, r2)
	}
	skills, _ = pgSkills(t, s)
	got = pgContents(t, skills)
	if got["pdf/references/format.md"] != "format v2\n" || got["pdf/new.txt"] != "new\n" || got["pdf/old.txt"] != "" {
		t.Errorf("after the update: %v", got)
	}

	// A deletion.
	r3, err := s.Delete(ctx, "docs", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if pgRevNumber(t, r3) != pgRevNumber(t, r2)+1 {
		t.Errorf("delete moved the revision from %s to %s", r2, r3)
	}
	skills, _ = pgSkills(t, s)
	if len(skills) != 1 || skills[0].Name != "pdf" {
		t.Errorf("after the deletion: %v", skills)
	}
	if _, err := s.Delete(ctx, "docs", "bob"); !errors.Is(err, postgres.ErrNoSkill) {
		t.Errorf("deleting a missing skill: %v", err)
	}

	// Who changed what: one row per change, none for the no-op.
	if n := pgtest.QueryValue[int64](t, s.cluster, "SELECT count(*) FROM "+s.cfg.Schema+".changes"); n != 4 {
		t.Errorf("%d changes recorded, want 4", n)
	}
	if n := pgtest.QueryValue[int64](t, s.cluster, "SELECT count(*) FROM "+s.cfg.Schema+".changes WHERE skill = 'docs' AND action = 'delete' AND author = 'bob' AND revision = $1", pgRevNumber(t, r3)); n != 1 {
		t.Error("the deletion is not recorded with its author and revision")
	}
}

// TestPostgresPublishValidates refuses a skill that strict validation
// refuses, and writes nothing.
func TestPostgresPublishValidates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newPostgres(t, repository.Options{})
	before, _ := s.Sync(ctx)
	for name, files := range map[string]fstest.MapFS{
		"pdf":    pgSkillFS("other", "Name differs from the directory.", nil),
		"Upper":  pgSkillFS("Upper", "Upper case.", nil),
		"nodesc": {"SKILL.md": {Data: []byte("---\nname: nodesc\n---\n")}},
		"../x":   pgSkillFS("x", "Not one component.", nil),
		"back":   pgSkillFS("back", "A backslash in a path.", map[string]string{`a\b`: "x"}),
	} {
		_, err := s.PublishSkill(ctx, name, files, "mallory")
		var invalid *repository.InvalidSkillError
		if !errors.As(err, &invalid) || len(invalid.Problems) == 0 {
			t.Errorf("publish %s: %v, want an InvalidSkillError", name, err)
		}
	}
	if after, _ := s.Sync(ctx); after != before {
		t.Errorf("a refused publish moved the revision from %s to %s", before, after)
	}
}

// pgTracer counts queries and can act when one ends.
type pgTracer struct {
	mu      sync.Mutex
	queries []pgx.TraceQueryStartData
	onEnd   func(conn *pgx.Conn, sql string)
}

type pgSQLKey struct{}

func (q *pgTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queries = append(q.queries, data)
	return context.WithValue(ctx, pgSQLKey{}, data.SQL)
}

func (q *pgTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryEndData) {
	q.mu.Lock()
	hook := q.onEnd
	q.mu.Unlock()
	if hook != nil {
		hook(conn, ctx.Value(pgSQLKey{}).(string))
	}
}

// take returns the queries seen since the last take, leaving out begin
// and commit, which read nothing.
func (q *pgTracer) take() []pgx.TraceQueryStartData {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []pgx.TraceQueryStartData
	for _, d := range q.queries {
		if d.SQL != "commit" && !strings.HasPrefix(d.SQL, "begin") {
			out = append(out, d)
		}
	}
	q.queries = nil
	return out
}

func (q *pgTracer) setOnEnd(f func(conn *pgx.Conn, sql string)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.onEnd = f
}

// TestPostgresCheapCheck counts queries: Sync runs one, whether or not
// the source changed; Skills of an unchanged source runs one; Skills after
// a change of one file reads only that file's content, in one query, since
// the SKILL.md it holds already needs no first pass.
func TestPostgresCheapCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tracer := &pgTracer{}
	s := newPostgres(t, repository.Options{}, func(c *postgres.PostgresConfig) { c.Tracer = tracer })
	untraced := s.cfg
	untraced.Tracer = nil
	other := pgOpen(t, s.cluster, untraced, repository.Options{})
	if _, err := other.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Read PDF files.", map[string]string{"a.txt": "a", "b.txt": "b"}), "alice"); err != nil {
		t.Fatal(err)
	}
	// A new process: create: true costs nothing while the tables are
	// current.
	fresh := pgOpen(t, s.cluster, s.cfg, repository.Options{})
	tracer.take()
	if _, err := fresh.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if q := tracer.take(); len(q) != 1 {
		t.Fatalf("the first Sync of a new source ran %d queries, want 1: %v", len(q), q)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if q := tracer.take(); len(q) != 1 {
			t.Fatalf("Sync ran %d queries, want 1: %v", len(q), q)
		}
	}
	pgSkills(t, s)
	if q := tracer.take(); len(q) != 4 {
		t.Errorf("a first Skills ran %d queries, want 4 (revision, listing, SKILL.md contents, the kept skills' contents): %v", len(q), q)
	}
	pgSkills(t, s)
	if q := tracer.take(); len(q) != 1 {
		t.Errorf("Skills of an unchanged source ran %d queries, want 1: %v", len(q), q)
	}
	if _, err := other.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Read PDF files.", map[string]string{"a.txt": "a", "b.txt": "changed"}), "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if q := tracer.take(); len(q) != 1 {
		t.Fatalf("Sync after a change ran %d queries, want 1", len(q))
	}
	skills, _ := pgSkills(t, s)
	q := tracer.take()
	if len(q) != 3 {
		t.Fatalf("Skills after a change ran %d queries, want 3: %v", len(q), q)
	}
	if asked := q[2].Args[1].([]string); !slices.Equal(asked, []string{"b.txt"}) {
		t.Errorf("Skills after a change of b.txt read the pgContents of %v", asked)
	}
	if got := pgContents(t, skills); got["pdf/b.txt"] != "changed" || got["pdf/a.txt"] != "a" {
		t.Errorf("read %v", got)
	}
}

// TestPostgresLargeFile reads a file larger than one chunk in slices, and
// never downloads a file over max_file_size.
func TestPostgresLargeFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tracer := &pgTracer{}
	s := newPostgres(t, repository.Options{MaxFileSize: 3 << 20}, func(c *postgres.PostgresConfig) { c.Tracer = tracer })
	big := strings.Repeat("0123456789abcdef", (5<<20)/32) // 2.5 MiB
	if _, err := s.PublishSkill(ctx, "big", pgSkillFS("big", "Holds a large file.", map[string]string{"data.bin": big}), "alice"); err != nil {
		t.Fatal(err)
	}
	huge := map[string]repositorytest.File{
		"huge/SKILL.md": {Data: "---\nname: huge\ndescription: Over the limit.\n---\n"},
		"huge/data.bin": {Data: strings.Repeat("z", 4<<20)},
	}
	s.loadRaw(t, huge)
	tracer.take()
	skills, problems := pgSkills(t, s)
	reads := 0
	for _, q := range tracer.take() {
		if strings.Contains(q.SQL, "substring(content FROM $3") {
			reads++
		}
	}
	if reads != 3 {
		t.Errorf("a 2.5 MiB file was read in %d slices, want 3", reads)
	}
	if len(skills) != 1 || pgContents(t, skills)["big/data.bin"] != big {
		t.Errorf("the large file did not come back whole")
	}
	if !pgHasProblem(problems, "file-too-large", "huge/data.bin") {
		t.Errorf("no file-too-large problem for huge/data.bin: %v", problems)
	}
	err := filepath.WalkDir(s.spool, func(p string, d fs.DirEntry, err error) error {
		if info, _ := d.Info(); err == nil && !d.IsDir() && info.Size() == 4<<20 {
			t.Errorf("the file over max_file_size was copied to %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func pgHasProblem(problems []skill.Problem, rule, file string) bool {
	return slices.ContainsFunc(problems, func(p skill.Problem) bool { return p.Rule == rule && p.File == file })
}

// TestPostgresWrongPassword fails with a clear error that holds no part
// of the secret, whichever form the connection string has.
func TestPostgresWrongPassword(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	secret := "hunter2-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	port := strconv.Itoa(c.Port())
	for name, dsn := range map[string]string{
		"url":      "postgres://postgres:" + secret + "@127.0.0.1:" + port + "/postgres?sslmode=disable",
		"keyvalue": "host=127.0.0.1 port=" + port + " user=postgres password=" + secret + " dbname=postgres sslmode=disable",
	} {
		t.Run(name, func(t *testing.T) {
			env := hostenv.New(t.TempDir(), []string{"SKILLSYNC_TEST_DSN=" + dsn})
			p, err := postgres.NewPostgres(postgres.PostgresConfig{Source: "team", DSNEnv: "SKILLSYNC_TEST_DSN", Create: true}, repository.Options{Env: env})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			_, err = p.Sync(context.Background())
			if err == nil {
				t.Fatal("a wrong password was accepted")
			}
			if !strings.Contains(err.Error(), "password authentication failed") || !strings.Contains(err.Error(), "source team") {
				t.Errorf("unclear error: %v", err)
			}
			pgNoSecret(t, err, secret)
			_, _, err = p.Skills(context.Background())
			pgNoSecret(t, err, secret)
			_, err = p.PublishSkill(context.Background(), "x", pgSkillFS("x", "X.", nil), "a")
			pgNoSecret(t, err, secret)
		})
	}
	t.Run("unparseable", func(t *testing.T) {
		// An "@" in a password that is not escaped defeats pgx's own
		// redaction of the string in its parse error: what follows the
		// "@" would be shown.
		env := hostenv.New(t.TempDir(), []string{"SKILLSYNC_TEST_DSN=postgres://postgres:se@" + secret + "@127.0.0.1:notaport/db"})
		p, err := postgres.NewPostgres(postgres.PostgresConfig{Source: "team", DSNEnv: "SKILLSYNC_TEST_DSN"}, repository.Options{Env: env})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Sync(context.Background())
		if !errors.Is(err, postgres.ErrDSN) {
			t.Errorf("Sync = %v, want ErrDSN", err)
		}
		pgNoSecret(t, err, secret)
		if err := p.Listen(context.Background(), func(repository.Revision) {}); !errors.Is(err, postgres.ErrDSN) {
			t.Errorf("Listen = %v, want ErrDSN at once", err)
		}
	})
	t.Run("unset", func(t *testing.T) {
		p, _ := postgres.NewPostgres(postgres.PostgresConfig{Source: "team", DSNEnv: "SKILLSYNC_TEST_NO_SUCH_VAR"}, repository.Options{})
		if _, err := p.Sync(context.Background()); !errors.Is(err, postgres.ErrDSN) || !strings.Contains(err.Error(), "SKILLSYNC_TEST_NO_SUCH_VAR") {
			t.Errorf("Sync = %v, want ErrDSN naming the variable", err)
		}
	})
}

// pgNoSecret fails when the secret is in the message of err or of any error
// it wraps.
func pgNoSecret(t *testing.T, err error, secret string) {
	t.Helper()
	if err == nil {
		t.Error("no error")
		return
	}
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if strings.Contains(e.Error(), secret) {
			t.Errorf("the secret is in the error (%T): %v", e, e)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
}

// TestPostgresMissingTables names the create flag, and a schema version
// this skillsync does not know is refused.
func TestPostgresMissingTables(t *testing.T) {
	t.Parallel()
	s := newPostgres(t, repository.Options{}, func(c *postgres.PostgresConfig) { c.Create = false })
	_, err := s.Sync(context.Background())
	if !errors.Is(err, postgres.ErrNoTables) || !strings.Contains(err.Error(), "create: true") {
		t.Errorf("Sync of a schema without tables = %v", err)
	}
	if _, _, err := s.Skills(context.Background()); !errors.Is(err, postgres.ErrNoTables) {
		t.Errorf("Skills of a schema without tables = %v", err)
	}

	created := pgOpen(t, s.cluster, func() postgres.PostgresConfig { c := s.cfg; c.Create = true; return c }(), repository.Options{})
	if _, err := created.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sync(context.Background()); err != nil {
		t.Errorf("Sync once the tables exist: %v", err)
	}
	pgtest.Exec(t, s.cluster, "INSERT INTO "+s.cfg.Schema+".schema_migrations (version) VALUES (999)")
	if _, err := s.Sync(context.Background()); !errors.Is(err, postgres.ErrSchemaVersion) || !strings.Contains(err.Error(), "upgrade skillsync") {
		t.Errorf("Sync of a newer schema = %v", err)
	}
}

// TestPostgresForeignWriter: a writer that knows nothing of skillsync
// still moves the revision, once per transaction.
func TestPostgresForeignWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newPostgres(t, repository.Options{})
	before, _ := s.Sync(ctx)
	s.loadRaw(t, map[string]repositorytest.File{"a/SKILL.md": {Data: "---\nname: a\ndescription: A.\n---\n"}, "a/x.txt": {Data: "x"}})
	after, _ := s.Sync(ctx)
	if pgRevNumber(t, after) != pgRevNumber(t, before)+1 {
		t.Errorf("a transaction of four statements moved the revision from %s to %s, want one step", before, after)
	}
	pgtest.Exec(t, s.cluster, "UPDATE "+s.cfg.Schema+".files SET content = 'y' WHERE path = 'x.txt'")
	if rev, _ := s.Sync(ctx); pgRevNumber(t, rev) != pgRevNumber(t, after)+1 {
		t.Errorf("an update by hand did not move the revision: %s", rev)
	}
	skills, _ := pgSkills(t, s)
	if got := pgContents(t, skills)["a/x.txt"]; got != "y" {
		t.Errorf("x.txt = %q after the update by hand", got)
	}
}

// TestPostgresHostileRows: rows no skillsync would write are each skipped
// with a problem, and the other skills are served.
func TestPostgresHostileRows(t *testing.T) {
	t.Parallel()
	s := newPostgres(t, repository.Options{})
	md := func(name string) repositorytest.File {
		return repositorytest.File{Data: "---\nname: " + name + "\ndescription: D.\n---\n"}
	}
	s.loadRaw(t, map[string]repositorytest.File{
		"good/SKILL.md":           md("good"),
		"dotdot/SKILL.md":         md("dotdot"),
		"dotdot/../../escape":     {Data: "x"},
		"abs/SKILL.md":            md("abs"),
		"abs//etc/passwd":         {Data: "x"},
		"clash/SKILL.md":          md("clash"),
		"clash/x":                 {Data: "a file"},
		"clash/x/y":               {Data: "under the file"},
		"back/SKILL.md":           md("back"),
		`back/a\b`:                {Data: "x"},
		"../SKILL.md":             md("up"),
		"good-too/SKILL.md":       md("good-too"),
		"good-too/scripts/run.sh": {Data: "#!/bin/sh\n", Mode: 0o755},
	})
	pgtest.Exec(t, s.cluster, "INSERT INTO "+s.cfg.Schema+".skills (name) VALUES ('a/b')")
	skills, problems := pgSkills(t, s)
	names := skillNames(skills)
	if !slices.Equal(names, []string{"good", "good-too"}) {
		t.Errorf("skills = %v, want good and good-too", names)
	}
	for _, want := range []struct{ rule, path string }{
		{"file-path-invalid", "dotdot"}, {"file-path-invalid", "abs"}, {"file-path-conflict", "clash"},
		{"file-path-invalid", "back"}, {"skill-name-invalid", ".."}, {"skill-name-invalid", "a/b"},
	} {
		if !slices.ContainsFunc(problems, func(p skill.Problem) bool {
			return p.Rule == want.rule && p.Path == want.path && p.Level == skill.Error && p.Source == "team"
		}) {
			t.Errorf("no %s problem for %q in %v", want.rule, want.path, problems)
		}
	}
}

// TestPostgresConsistentSnapshot commits a transaction that changes two
// skills while Skills reads, between its listing and its contents: the
// read sees all of before, the next one all of after.
func TestPostgresConsistentSnapshot(t *testing.T) {
	t.Parallel()
	tracer := &pgTracer{}
	s := newPostgres(t, repository.Options{}, func(c *postgres.PostgresConfig) { c.Tracer = tracer })
	md := func(name string) repositorytest.File {
		return repositorytest.File{Data: "---\nname: " + name + "\ndescription: D.\n---\n"}
	}
	s.loadRaw(t, map[string]repositorytest.File{
		"one/SKILL.md": md("one"), "one/v.txt": {Data: "before"}, "one/gone.txt": {Data: "before"},
		"two/SKILL.md": md("two"), "two/v.txt": {Data: "before"},
	})
	var fired atomic.Bool
	tracer.setOnEnd(func(_ *pgx.Conn, sql string) {
		if !strings.Contains(sql, "LEFT JOIN") || fired.Swap(true) {
			return
		}
		pgtest.Exec(t, s.cluster, "UPDATE "+s.cfg.Schema+".files SET content = 'after' WHERE path = 'v.txt'; DELETE FROM "+
			s.cfg.Schema+".files WHERE path = 'gone.txt'")
	})
	skills, problems := pgSkills(t, s)
	if !fired.Load() {
		t.Fatal("the writer did not run during the read")
	}
	got := pgContents(t, skills)
	want := map[string]string{"one/v.txt": "before", "one/gone.txt": "before", "two/v.txt": "before"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q during the commit, want %q (all of before): %v (problems %v)", k, got[k], v, got, problems)
		}
	}
	skills, _ = pgSkills(t, s)
	got = pgContents(t, skills)
	if got["one/v.txt"] != "after" || got["two/v.txt"] != "after" || got["one/gone.txt"] != "" {
		t.Errorf("the next read is not all of after: %v", got)
	}
}

// TestPostgresServerGoesAway loses the connection in the middle of a read,
// then the whole server: each is an error, and the skills of the last good
// read stay readable.
func TestPostgresServerGoesAway(t *testing.T) {
	// Not parallel: it stops the shared cluster, which the parallel tests
	// run on after the sequential ones are done.
	ctx := context.Background()
	tracer := &pgTracer{}
	s := newPostgres(t, repository.Options{}, func(c *postgres.PostgresConfig) { c.Tracer = tracer })
	if _, err := s.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Read PDF files.", map[string]string{"v.txt": "good"}), "alice"); err != nil {
		t.Fatal(err)
	}
	good, _ := pgSkills(t, s)
	goodRev := s.SkillsRevision()
	if _, err := s.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Read PDF files.", map[string]string{"v.txt": "newer"}), "alice"); err != nil {
		t.Fatal(err)
	}

	tracer.setOnEnd(func(conn *pgx.Conn, sql string) {
		if strings.Contains(sql, "LEFT JOIN") {
			pgtest.Exec(t, s.cluster, "SELECT pg_terminate_backend($1)", conn.PgConn().PID())
		}
	})
	if _, _, err := s.Skills(ctx); err == nil {
		t.Fatal("Skills succeeded although its connection was closed mid-read")
	}
	tracer.setOnEnd(nil)
	if s.SkillsRevision() != goodRev || pgContents(t, good)["pdf/v.txt"] != "good" {
		t.Errorf("the last good read was lost: %s %v", s.SkillsRevision(), pgContents(t, good))
	}

	if err := s.cluster.Kill(); err != nil {
		t.Fatal(err)
	}
	_, errSync := s.Sync(ctx)
	_, _, errSkills := s.Skills(ctx)
	if err := s.cluster.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if errSync == nil || errSkills == nil {
		t.Fatalf("with the server gone: Sync %v, Skills %v; want errors", errSync, errSkills)
	}
	if got := pgContents(t, good)["pdf/v.txt"]; got != "good" {
		t.Errorf("the last good files were lost: %q", got)
	}
	skills, _ := pgSkills(t, s)
	if got := pgContents(t, skills)["pdf/v.txt"]; got != "newer" {
		t.Errorf("after the server came back: %q", got)
	}
}

// TestPostgresPublishRace publishes one skill from many writers at once,
// each with its own connections as separate processes would: every publish
// is one step of the revision, and the final state is one whole version.
func TestPostgresPublishRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newPostgres(t, repository.Options{})
	start, _ := s.Sync(ctx)
	const writers = 8
	version := func(i int) fstest.MapFS {
		extra := map[string]string{}
		for k := 0; k <= i; k++ {
			extra[fmt.Sprintf("f%d.txt", k)] = fmt.Sprintf("version %d", i)
		}
		return pgSkillFS("race", fmt.Sprintf("version %d", i), extra)
	}
	var wg sync.WaitGroup
	begin := make(chan struct{})
	errs := make([]error, writers)
	for i := range writers {
		w := pgOpen(t, s.cluster, s.cfg, repository.Options{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			_, errs[i] = w.PublishSkill(ctx, "race", version(i), fmt.Sprintf("writer%d", i))
		}()
	}
	close(begin)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	end, _ := s.Sync(ctx)
	if pgRevNumber(t, end) != pgRevNumber(t, start)+writers {
		t.Errorf("revision went from %s to %s, want %d steps", start, end, writers)
	}
	skills, problems := pgSkills(t, s)
	if len(skills) != 1 {
		t.Fatalf("skills %v, problems %v", skills, problems)
	}
	got := pgContents(t, skills)
	v := -1
	fmt.Sscanf(skills[0].Description, "version %d", &v)
	want := map[string]string{}
	for name, f := range version(v) {
		want["race/"+name] = string(f.Data)
	}
	if v < 0 || !maps.Equal(got, want) {
		t.Errorf("the final state is not one whole version:\n got %v\nwant %v", got, want)
	}
	if n := pgtest.QueryValue[int64](t, s.cluster, "SELECT count(*) FROM "+s.cfg.Schema+".changes WHERE skill = 'race'"); n != writers {
		t.Errorf("%d changes recorded, want %d", n, writers)
	}
}

// TestPostgresListen is told of a publish by another writer, and again
// after the server restarted under it.
func TestPostgresListen(t *testing.T) {
	// Not parallel: it stops the shared cluster, which the parallel tests
	// run on after the sequential ones are done.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logged atomic.Int64
	s := newPostgres(t, repository.Options{}, func(c *postgres.PostgresConfig) {
		c.Logf = func(string, ...any) { logged.Add(1) }
	})
	writer := pgOpen(t, s.cluster, s.cfg, repository.Options{})
	seen := make(chan repository.Revision, 100)
	done := make(chan error, 1)
	go func() { done <- s.Listen(ctx, func(r repository.Revision) { seen <- r }) }()

	current, _ := writer.Sync(ctx)
	pgWaitFor(t, seen, current)
	rev, err := writer.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Read PDF files.", nil), "alice")
	if err != nil {
		t.Fatal(err)
	}
	pgWaitFor(t, seen, rev)

	if err := s.cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.cluster.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	writer = pgOpen(t, s.cluster, s.cfg, repository.Options{}) // a new process
	rev, err = writer.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Read PDF files, again.", nil), "alice")
	if err != nil {
		t.Fatal(err)
	}
	pgWaitFor(t, seen, rev)
	if logged.Load() == 0 {
		t.Error("the lost connection was not reported")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Listen returned %v, want context.Canceled", err)
	}
}

// pgWaitFor waits until want is seen; other revisions may come first.
func pgWaitFor(t *testing.T, seen <-chan repository.Revision, want repository.Revision) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case got := <-seen:
			if got == want {
				return
			}
		case <-timeout:
			t.Fatalf("revision %s was never reported", want)
		}
	}
}

// TestPostgresPublishEdit: an edit changes the SKILL.md the database
// holds now and keeps the skill's other files. A writer that changes the
// skill between the edit's read and its write is not undone: the edit is
// made again on what that writer stored.
func TestPostgresPublishEdit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newPostgres(t, repository.Options{})
	if _, err := s.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Version one.", map[string]string{"notes.md": "kept\n"}), "alice"); err != nil {
		t.Fatal(err)
	}
	other := pgOpen(t, s.cluster, s.cfg, repository.Options{})
	edits := 0
	edit := func(md []byte) ([]byte, error) {
		edits++
		if edits == 1 {
			if _, err := other.PublishSkill(ctx, "pdf", pgSkillFS("pdf", "Version two.", map[string]string{"notes.md": "kept\n"}), "bob"); err != nil {
				return nil, err
			}
		}
		return append(bytes.Clone(md), "edited\n"...), nil
	}
	if _, err := s.Publish(ctx, repository.PublishRequest{Name: "pdf", Edit: edit, Author: "carol"}); err != nil {
		t.Fatal(err)
	}
	skills, problems := pgSkills(t, s)
	got := pgContents(t, skills)
	if edits != 2 || !strings.Contains(got["pdf/SKILL.md"], "Version two.") || !strings.HasSuffix(got["pdf/SKILL.md"], "edited\n") || got["pdf/notes.md"] != "kept\n" {
		t.Errorf("after %d edits: %v %v", edits, got, problems)
	}
	if _, err := s.Publish(ctx, repository.PublishRequest{Name: "nosuch", Edit: edit, Author: "carol"}); !errors.Is(err, postgres.ErrNoSkill) {
		t.Errorf("edit of a skill the database lacks = %v", err)
	}
}

// TestPostgresForeignTables: a schema holding a table of the registry's
// names that skillsync did not make is refused with the fix.
func TestPostgresForeignTables(t *testing.T) {
	t.Parallel()
	s := newPostgres(t, repository.Options{}, func(c *postgres.PostgresConfig) { c.Create = false })
	pgtest.Exec(t, s.cluster, "CREATE SCHEMA IF NOT EXISTS "+s.cfg.Schema)
	pgtest.Exec(t, s.cluster, "CREATE TABLE "+s.cfg.Schema+".skills (id serial PRIMARY KEY, title text)")
	created := pgOpen(t, s.cluster, func() postgres.PostgresConfig { c := s.cfg; c.Create = true; return c }(), repository.Options{})
	_, err := created.Sync(context.Background())
	if err == nil || !strings.Contains(err.Error(), "set schema: of source team to a schema of skillsync's own") {
		t.Errorf("Sync over a foreign skills table = %v", err)
	}
}
