package sqlitefile

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	// A real SQLite writes every database these tests read.
	_ "modernc.org/sqlite"
)

// create opens a new database at path with a real SQLite, on one
// connection, and runs the statements given.
func create(t testing.TB, path, params string, stmts ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+params)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, s := range stmts {
		exec(t, db, s)
	}
	return db
}

func exec(t testing.TB, db *sql.DB, stmt string, args ...any) {
	t.Helper()
	if _, err := db.Exec(stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// row is what a test wrote into table t: its rowid, and a, b, c, d.
type row struct {
	id         int64
	a, b, c, d any
}

// values are the kinds of value SQLite stores, each serial type among
// them: integers of every width and sign, the floats, texts and blobs
// from empty to many overflow pages long, NULL.
func values(r *rand.Rand, i int) any {
	switch i % 9 {
	case 0:
		return nil
	case 1:
		return []int64{0, 1, -1, 127, -128, 32767, 1 << 23, -(1 << 31), 1 << 40, 1 << 47, math.MaxInt64, math.MinInt64}[r.IntN(12)]
	case 2:
		return []float64{0.5, -1e300, math.Inf(1), 3.25}[r.IntN(4)]
	case 3, 4, 5:
		return strings.Repeat(string(rune('a'+r.IntN(26))), []int{0, 1, 100, 470, 600, 5000, 70000, 300000}[r.IntN(8)])
	default:
		b := make([]byte, []int{0, 7, 1000, 9000}[r.IntN(4)])
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		return b
	}
}

// fill writes n rows of random values into table t (id INTEGER PRIMARY
// KEY, a, b TEXT, c BLOB), deletes some, adds column d and writes rows
// with it, and returns what the table then holds, by id.
func fill(t *testing.T, db *sql.DB, n int) map[int64]row {
	r := rand.New(rand.NewPCG(1, 2))
	want := map[int64]row{}
	exec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, a, b TEXT, c BLOB)")
	exec(t, db, "BEGIN")
	for i := range n {
		w := row{id: int64(i + 1), a: values(r, r.IntN(9)), b: values(r, 3), c: values(r, 6)}
		exec(t, db, "INSERT INTO t (id, a, b, c) VALUES (?, ?, ?, ?)", w.id, w.a, w.b, w.c)
		want[w.id] = w
	}
	exec(t, db, "COMMIT")
	exec(t, db, "DELETE FROM t WHERE id % 7 = 0")
	for id := range want {
		if id%7 == 0 {
			delete(want, id)
		}
	}
	exec(t, db, "ALTER TABLE t ADD COLUMN d TEXT")
	for i := range 20 {
		w := row{id: int64(n + 100 + i), a: int64(i), d: "added"}
		exec(t, db, "INSERT INTO t (id, a, d) VALUES (?, ?, ?)", w.id, w.a, w.d)
		want[w.id] = w
	}
	return want
}

// same tells whether v is what was written as w.
func same(v Value, w any) bool {
	switch w := w.(type) {
	case nil:
		return v.Kind == Null
	case int64:
		return v.Kind == Integer && v.Int == w
	case float64:
		return v.Kind == Float && v.Float == w
	case string:
		return v.Kind == Text && string(v.Bytes) == w
	case []byte:
		return v.Kind == Blob && bytes.Equal(v.Bytes, w)
	}
	return false
}

// check reads table t of the database at path and compares it with want.
func check(t *testing.T, path string, want map[int64]row) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tab, err := db.Table(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tab.Columns(), ","); got != "id,a,b,c,d" {
		t.Fatalf("columns %s", got)
	}
	seen := 0
	var refs []Ref
	last := int64(math.MinInt64)
	err = tab.Scan(ctx, func(r *Row) error {
		w, ok := want[r.Rowid()]
		if !ok {
			return fmt.Errorf("row %d was not written", r.Rowid())
		}
		if r.Rowid() <= last {
			return fmt.Errorf("row %d after %d", r.Rowid(), last)
		}
		last = r.Rowid()
		seen++
		if err := compare(r, w); err != nil {
			return err
		}
		if seen%50 == 0 {
			refs = append(refs, r.Ref())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Fatalf("%d rows read, %d written", seen, len(want))
	}
	for _, ref := range refs {
		r, err := tab.Row(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := compare(r, want[r.Rowid()]); err != nil {
			t.Fatalf("again: %v", err)
		}
	}
}

func compare(r *Row, w row) error {
	for i, wv := range []any{w.id, w.a, w.b, w.c, w.d} {
		v, err := r.Column(i)
		if err != nil {
			return fmt.Errorf("row %d column %d: %w", w.id, i, err)
		}
		if !same(v, wv) {
			return fmt.Errorf("row %d column %d: %v (%d bytes), want %T", w.id, i, v.Kind, len(v.Bytes), wv)
		}
		if b, ok := wv.([]byte); ok && r.Len(i) != int64(len(b)) {
			return fmt.Errorf("row %d column %d: length %d, want %d", w.id, i, r.Len(i), len(b))
		}
	}
	return nil
}

// TestScanReadsWhatSQLiteWrote: every value of every row, in pages of
// the smallest, the usual and the largest size, through interior pages
// and overflow chains, with rows deleted and a column added later.
func TestScanReadsWhatSQLiteWrote(t *testing.T) {
	for _, size := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			db := create(t, path, "", fmt.Sprintf("PRAGMA page_size = %d", size))
			want := fill(t, db, 600)
			db.Close()
			check(t, path, want)
		})
	}
}

// TestScanReadsTheLog: a database in WAL mode whose writer keeps its
// transactions in the log is read as the last one committed; a log cut
// off within a transaction, or with a frame whose checksum fails, is read
// up to the transaction before it.
func TestScanReadsTheLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	db := create(t, path, "?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)", "PRAGMA page_size = 1024")
	want := fill(t, db, 300)
	walSize := func() int64 {
		info, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	if walSize() == 0 {
		t.Fatal("the writer keeps no log")
	}
	check(t, path, want)

	// Two more transactions; keep the log as it was after the first.
	exec(t, db, "INSERT INTO t (id, a) VALUES (5000, 'one')")
	one := walSize()
	exec(t, db, "INSERT INTO t (id, a) VALUES (5001, 'two')")
	two := walSize()
	withOne := map[int64]row{5000: {id: 5000, a: "one"}}
	for id, w := range want {
		withOne[id] = w
	}

	copyAs := func(name string, walLen int64, edit func([]byte)) string {
		p := filepath.Join(dir, name)
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(path + suffix)
			if err != nil {
				t.Fatal(err)
			}
			if suffix != "" {
				b = b[:walLen]
				if edit != nil {
					edit(b)
				}
			}
			if err := os.WriteFile(p+suffix, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	check(t, copyAs("cut", two-100, nil), withOne)
	check(t, copyAs("bad", two, func(b []byte) { b[one+frameHeaderSize+10] ^= 0xff }), withOne)

	// Appends leave what was read as it was; a checkpoint does not.
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	exec(t, db, "INSERT INTO t (id, a) VALUES (5002, 'three')")
	if r.Changed() {
		t.Error("an append to the log is a change")
	}
	exec(t, db, "PRAGMA wal_checkpoint(TRUNCATE)")
	if !r.Changed() {
		t.Error("a checkpoint is no change")
	}
}

// TestHostileDatabases: what a database cannot be read for is said, and
// a loop among pages ends.
func TestHostileDatabases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	db := create(t, base, "", "PRAGMA page_size = 512")
	fill(t, db, 200)
	var root int64
	if err := db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = 't'").Scan(&root); err != nil {
		t.Fatal(err)
	}
	db.Close()
	orig, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	// edit returns the path of a copy of base changed by fn.
	edit := func(name string, fn func(b []byte)) string {
		b := bytes.Clone(orig)
		fn(b)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rootAt := int(root-1) * 512
	if orig[rootAt] != interiorTable {
		t.Fatalf("the root is not an interior page: %#x", orig[rootAt])
	}
	firstCell := int(binary.BigEndian.Uint16(orig[rootAt+12:]))

	utf16 := filepath.Join(dir, "utf16")
	create(t, utf16, "", "PRAGMA encoding = 'UTF-16le'", "CREATE TABLE t (a)").Close()
	noRowid := filepath.Join(dir, "norowid")
	create(t, noRowid, "", "CREATE TABLE t (a TEXT PRIMARY KEY) WITHOUT ROWID").Close()

	for _, c := range []struct {
		name, path, want string
		is               error
	}{
		{"not sqlite", edit("text", func(b []byte) { copy(b, "not a database") }), "not a SQLite database", ErrNotSQLite},
		{"page size", edit("size", func(b []byte) { b[16], b[17] = 0x03, 0x00 }), "page size 768", ErrMalformed},
		{"loop", edit("loop", func(b []byte) { binary.BigEndian.PutUint32(b[rootAt+firstCell:], uint32(root)) }), "reached twice", ErrMalformed},
		{"page out of range", edit("range", func(b []byte) { binary.BigEndian.PutUint32(b[rootAt+8:], 1<<30) }), "page 1073741824", ErrMalformed},
		{"page kind", edit("kind", func(b []byte) { b[rootAt] = 0x0a }), "not a page of a table", ErrMalformed},
		{"cell outside", edit("cell", func(b []byte) { binary.BigEndian.PutUint16(b[rootAt+12:], 2) }), "outside the page", ErrMalformed},
		{"utf-16", utf16, "UTF-16", nil},
		{"without rowid", noRowid, "WITHOUT ROWID", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := scanAll(ctx, c.path)
			if err == nil || !strings.Contains(err.Error(), c.want) || c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
}

// TestOverflowLoop: an overflow chain that comes back on itself ends.
func TestOverflowLoop(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	db := create(t, path, "", "PRAGMA page_size = 512", "CREATE TABLE t (a)")
	exec(t, db, "INSERT INTO t VALUES (?)", strings.Repeat("x", 20000))
	db.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := r.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var first uint32
	if err := tab.Scan(ctx, func(r *Row) error { first = r.overflow; return nil }); err != nil || first == 0 {
		t.Fatalf("no overflow page: %d %v", first, err)
	}
	r.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[int(first-1)*512:], first)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := scanAll(ctx, path); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "overflow chain") {
		t.Errorf("%v", err)
	}
}

// scanAll reads every column of every row of table t.
func scanAll(ctx context.Context, path string) error {
	db, err := Open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	tab, err := db.Table(ctx, "t")
	if err != nil {
		return err
	}
	return tab.Scan(ctx, func(r *Row) error {
		for i := range len(tab.Columns()) + 1 {
			if _, err := r.Column(i); err != nil {
				return err
			}
		}
		return nil
	})
}

// seedDB is a small real database for the mutation tests: an interior
// page, overflow chains, a rowid alias.
func seedDB(t testing.TB) []byte {
	path := filepath.Join(t.TempDir(), "seed")
	db := create(t, path, "", "PRAGMA page_size = 512", "CREATE TABLE t (id INTEGER PRIMARY KEY, a, b)")
	for i := range 40 {
		exec(t, db, "INSERT INTO t (a, b) VALUES (?, ?)", strings.Repeat("y", i*37), i)
	}
	db.Close()
	seed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// mutate changes 1 to 8 random bytes of a copy of b.
func mutate(r *rand.Rand, b []byte) []byte {
	b = bytes.Clone(b)
	for range 1 + r.IntN(8) {
		b[r.IntN(len(b))] = byte(r.IntN(256))
	}
	return b
}

// scanBytes writes b to a file and reads it whole.
func scanBytes(t *testing.T, b []byte) {
	p := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = scanAll(context.Background(), p)
}

// TestScanSurvivesMutations: 500 random changes to a real database are
// each read, or refused, without a panic or a hang (the test's timeout).
func TestScanSurvivesMutations(t *testing.T) {
	seed := seedDB(t)
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		scanBytes(t, mutate(r, seed))
	}
}

// FuzzScan: whatever the bytes of a database, reading it ends without a
// panic.
func FuzzScan(f *testing.F) {
	seed := seedDB(f)
	f.Add(seed)
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		f.Add(mutate(r, seed))
	}
	f.Fuzz(scanBytes)
}

func TestColumns(t *testing.T) {
	for _, c := range []struct {
		stmt  string
		cols  string
		rowid int
	}{
		{"CREATE TABLE `part` (\n\t`id` text PRIMARY KEY,\n\t`data` text NOT NULL,\n\tCONSTRAINT `fk` FOREIGN KEY (`id`) REFERENCES `x`(`id`)\n)", "id,data", -1},
		{`CREATE TABLE t (id INTEGER PRIMARY KEY, a)`, "id,a", 0},
		{`CREATE TABLE t (a, id integer not null primary key asc)`, "a,id", 1},
		{`CREATE TABLE t (id INTEGER PRIMARY KEY DESC, a)`, "id,a", -1},
		{`CREATE TABLE t (id INTEGER(10) PRIMARY KEY, a)`, "id,a", -1},
		{`CREATE TABLE t (id "INTEGER" PRIMARY KEY, a)`, "id,a", 0},
		{`CREATE TABLE t (id INT PRIMARY KEY, a)`, "id,a", -1},
		{`CREATE TABLE t (a, "b""c" DEFAULT (1, 2), [d e], 'f' CHECK (a > 0), PRIMARY KEY (a))`, `a,b"c,d e,f`, -1},
		{`CREATE TABLE t (x, id INTEGER, -- a comment, with a comma
			/* another, too */ PRIMARY KEY ("id"))`, "x,id", 1},
		{`create table "t" (a decimal(10, 2), b)`, "a,b", -1},
		{`CREATE TABLE t (a INTEGER CHECK (CAST(a AS INTEGER) > 0), b DEFAULT (CAST(1 AS TEXT)), c)`, "a,b,c", -1},
		{`CREATE TABLE t (x, id INTEGER, PRIMARY KEY (id COLLATE BINARY))`, "x,id", 1},
	} {
		cols, rowid, err := columns(c.stmt)
		var names []string
		for _, col := range cols {
			names = append(names, col.name)
		}
		for i, col := range cols {
			if col.field != i {
				t.Errorf("%s: column %s in field %d", c.stmt, col.name, col.field)
			}
		}
		if err != nil || strings.Join(names, ",") != c.cols || rowid != c.rowid {
			t.Errorf("%s: %q %d %v, want %s %d", c.stmt, names, rowid, err, c.cols, c.rowid)
		}
	}
	// SQLite adds no column with an expression for its DEFAULT, but a
	// file may say it did.
	if _, expr := literal(tokens("(1 + 2)"), "INTEGER"); !expr {
		t.Error("(1 + 2) is a literal")
	}
	for _, bad := range []string{"CREATE TABLE t AS SELECT 1", "CREATE TABLE t (a", "CREATE TABLE t (a) WITHOUT ROWID"} {
		if _, _, err := columns(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestColumnsAsSQLiteHasThem: a rowid alias and what is not one, a
// generated column (stored or computed), columns added with a DEFAULT,
// each read as SQLite reads it, or said to be unread.
func TestColumnsAsSQLiteHasThem(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	db := create(t, path, "",
		`CREATE TABLE t (id "INTEGER" PRIMARY KEY, n INTEGER(10) UNIQUE, v AS (n * 2) VIRTUAL, s GENERATED ALWAYS AS (n + 1) STORED, b TEXT)`,
		`INSERT INTO t (id, n, b) VALUES (7, 5, 'bee')`,
		`ALTER TABLE t ADD COLUMN d1 TEXT DEFAULT 'dflt'`,
		`ALTER TABLE t ADD COLUMN d2 INTEGER NOT NULL DEFAULT -7`,
		`ALTER TABLE t ADD COLUMN d3 REAL DEFAULT -2.5`,
		`ALTER TABLE t ADD COLUMN d4 TEXT DEFAULT NULL`)
	db.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tab, err := r.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		v   any
		err string
	}{{int64(7), ""}, {int64(5), ""}, {nil, "generated"}, {int64(6), ""}, {"bee", ""},
		{"dflt", ""}, {int64(-7), ""}, {nil, "not read"}, {nil, ""}}
	err = tab.Scan(ctx, func(row *Row) error {
		for i, w := range want {
			v, err := row.Column(i)
			if w.err != "" {
				if err == nil || !strings.Contains(err.Error(), w.err) {
					t.Errorf("column %s: %v, want an error about %q", tab.Columns()[i], err, w.err)
				}
				continue
			}
			if err != nil || !same(v, w.v) {
				t.Errorf("column %s: %+v %v, want %v", tab.Columns()[i], v, err, w.v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChangedSeesACheckpointInTheSameTick: a writer commits over pages
// the reader took from the database file and checkpoints them there,
// without the log's header moving; the file's time is put back, as when
// both writes fall in one tick of the clock. Changed still says so.
func TestChangedSeesACheckpointInTheSameTick(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	w := create(t, path, "?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)",
		"CREATE TABLE other (x)", "CREATE TABLE t (id INTEGER PRIMARY KEY, a)")
	oldRows(t, w)
	exec(t, w, "PRAGMA wal_checkpoint(TRUNCATE)") // t's pages only in the database file
	exec(t, w, "INSERT INTO other VALUES (1)")    // the log begins again
	r, tab, before := openT(t, path)
	if err := tab.Scan(ctx, func(*Row) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if r.Changed() {
		t.Fatal("changed before anything was written")
	}
	exec(t, w, "INSERT INTO other VALUES (2)")
	if r.Changed() {
		t.Fatal("a transaction over pages not read is a change")
	}
	exec(t, w, "UPDATE t SET a = 'new' WHERE id > 1000")
	exec(t, w, "PRAGMA wal_checkpoint(PASSIVE)")
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if !r.Changed() {
		t.Error("a checkpoint over pages read in the same tick is no change")
	}
}

// TestChangedSeesOpenCodeComeAndGo: no log when the read begins; OpenCode
// starts while it runs, commits over rows not yet read, and quits, which
// checkpoints and removes its log, all within one tick of the file's
// clock. The read mixes two states, and Changed says so.
func TestChangedSeesOpenCodeComeAndGo(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db")
	w := create(t, path, "?_pragma=journal_mode(WAL)", "CREATE TABLE t (id INTEGER PRIMARY KEY, a)")
	oldRows(t, w)
	w.Close()
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a log after close: %v", err)
	}
	r, tab, before := openT(t, path)
	var first, last string
	err := tab.Scan(ctx, func(row *Row) error {
		v, err := row.Column(1)
		if first == "" {
			first = string(v.Bytes)
			oc := create(t, path, "?_pragma=journal_mode(WAL)")
			exec(t, oc, "UPDATE t SET a = 'NEW' WHERE id IN (1, 2000)")
			oc.Close()
			if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
				t.Fatal(err)
			}
		}
		last = string(v.Bytes)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, "old") || last != "NEW" {
		t.Fatalf("not torn: %.8s ... %.8s", first, last)
	}
	if r.Changed() {
		return
	}
	t.Error("a torn read is no change")
}

// oldRows writes 2,000 rows into table t (id INTEGER PRIMARY KEY, a).
func oldRows(t *testing.T, w *sql.DB) {
	exec(t, w, "BEGIN")
	for i := range 2000 {
		exec(t, w, "INSERT INTO t (a) VALUES (?)", fmt.Sprintf("old-%04d-%s", i, strings.Repeat("p", 40)))
	}
	exec(t, w, "COMMIT")
}

// openT opens the database at path and its table t, and returns them
// with the file's state before.
func openT(t *testing.T, path string) (*DB, *Table, os.FileInfo) {
	t.Helper()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	tab, err := r.Table(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	return r, tab, before
}

// Tables finds every table asked for in one scan, whatever its case, in
// the order asked; one missing is named in an ErrNoTable.
func TestTables(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.db")
	create(t, path, "",
		"CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT)",
		"CREATE INDEX session_dir ON session (directory)",
		"CREATE TABLE Part (id TEXT PRIMARY KEY, data BLOB)")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		names []string
		want  string // the tables' names and columns, or the error
	}{
		{[]string{"part", "SESSION"}, "Part(id,data) session(id,directory)"},
		{[]string{"session"}, "session(id,directory)"},
		{[]string{"session", "Session"}, "session(id,directory) session(id,directory)"},
		{[]string{"session", "session_dir"}, "no such table: session_dir"},
		{[]string{"nope", "part"}, "no such table: nope"},
	} {
		tabs, err := db.Tables(ctx, tc.names...)
		var got []string
		for _, tab := range tabs {
			got = append(got, tab.Name+"("+strings.Join(tab.Columns(), ",")+")")
		}
		if err != nil {
			if !errors.Is(err, ErrNoTable) {
				t.Errorf("Tables(%q): %v, not an ErrNoTable", tc.names, err)
			}
			got = []string{err.Error()}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Tables(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}
