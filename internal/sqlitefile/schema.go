package sqlitefile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrNoTable is wrapped by the error of a table the schema does not have.
var ErrNoTable = errors.New("no such table")

// Table is a table of the database: its name, its columns in order, and
// where its b-tree begins.
type Table struct {
	db    *DB
	Name  string
	root  uint32
	cols  []column
	names []string
	rowid int // the column that is the rowid (INTEGER PRIMARY KEY), or -1

	again    Row // what Row returns, and its page
	againBuf []byte
}

// column is a column as its table's statement declares it.
type column struct {
	name string
	typ  string // the declared type, upper case
	// field is the column's place in a record; -1 for a generated
	// VIRTUAL column, which is computed, not stored.
	field int
	// def is the DEFAULT of a column added after rows were written, for
	// those rows; defExpr says it is an expression, which is not read.
	def     Value
	defExpr bool
}

// schema is sqlite_schema: its b-tree is rooted at page 1.
func (db *DB) schema() *Table {
	t := &Table{db: db, Name: "sqlite_schema", root: 1, rowid: -1}
	for i, n := range []string{"type", "name", "tbl_name", "rootpage", "sql"} {
		t.cols = append(t.cols, column{name: n, field: i})
		t.names = append(t.names, n)
	}
	return t
}

// Table finds the table called name (as SQLite does, whatever its case)
// in the schema, and its columns in the statement that made it.
func (db *DB) Table(ctx context.Context, name string) (*Table, error) {
	t, err := db.Tables(ctx, name)
	if err != nil {
		return nil, err
	}
	return t[0], nil
}

// Tables finds the tables called names, as Table does, in one scan of
// the schema: the tables in the order of names.
func (db *DB) Tables(ctx context.Context, names ...string) ([]*Table, error) {
	found := make([]*Table, len(names))
	left := len(names)
	err := db.schema().Scan(ctx, func(r *Row) error {
		typ, err := r.Column(0)
		if err != nil || typ.Kind != Text || string(typ.Bytes) != "table" {
			return err
		}
		n, err := r.Column(1)
		if err != nil || n.Kind != Text {
			return err
		}
		var t *Table
		for i, name := range names {
			if found[i] != nil || !strings.EqualFold(string(n.Bytes), name) {
				continue
			}
			if t == nil {
				if t, err = db.table(r, string(n.Bytes)); err != nil {
					return err
				}
			}
			found[i] = t
			left--
		}
		if left == 0 {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, err
	}
	for i, t := range found {
		if t == nil {
			return nil, fmt.Errorf("%w: %s", ErrNoTable, names[i])
		}
	}
	return found, nil
}

// table reads the table called name from its row r of the schema.
func (db *DB) table(r *Row, name string) (*Table, error) {
	root, err := r.Column(3)
	if err != nil {
		return nil, err
	}
	stmt, err := r.Column(4)
	if err != nil {
		return nil, err
	}
	if root.Kind != Integer || root.Int <= 0 || root.Int > int64(db.pages) {
		return nil, fmt.Errorf("%w: table %s: root page %d", ErrMalformed, name, root.Int)
	}
	cols, rowid, err := columns(string(stmt.Bytes))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	t := &Table{db: db, Name: name, root: uint32(root.Int), cols: cols, rowid: rowid}
	for _, c := range cols {
		t.names = append(t.names, c.name)
	}
	return t, nil
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// Columns are the table's columns, in order.
func (t *Table) Columns() []string { return t.names }

// Column is the index of the column called name (whatever its case), or
// -1.
func (t *Table) Column(name string) int {
	for i, c := range t.names {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// Scan hands fn every row of the table in rowid order, until fn returns
// an error, which Scan returns.
func (t *Table) Scan(ctx context.Context, fn func(*Row) error) error {
	bufs := make([][]byte, maxDepth)
	for i := range bufs {
		bufs[i] = make([]byte, t.db.pageSize)
	}
	return t.walk(ctx, t.root, 0, map[uint32]bool{}, bufs, &Row{t: t}, fn)
}

// Row reads again the row that ref names. It is valid until the next
// call of Row.
func (t *Table) Row(ref Ref) (*Row, error) {
	if t.againBuf == nil {
		t.againBuf = make([]byte, t.db.pageSize)
	}
	p, err := t.db.loadPage(ref.page, t.againBuf)
	if err != nil {
		return nil, err
	}
	if p.kind != leafTable || ref.cell < 0 || ref.cell >= p.cells {
		return nil, malformed(ref.page, "cell %d is not a row", ref.cell)
	}
	r := &t.again
	r.t = t
	if err := r.load(&p, ref.cell); err != nil {
		return nil, err
	}
	if r.rowid != ref.rowid {
		return nil, malformed(ref.page, "cell %d holds row %d, not %d", ref.cell, r.rowid, ref.rowid)
	}
	return r, nil
}

// columns reads the columns of a CREATE TABLE statement, and which of
// them is the rowid: a column whose type is INTEGER, exactly, that is
// the primary key on its own (but not PRIMARY KEY DESC, as SQLite keeps
// for compatibility). A WITHOUT ROWID table is stored another way, and is
// not read.
func columns(stmt string) ([]column, int, error) {
	toks := tokens(stmt)
	open := slices.Index(toks, "(")
	if open < 0 {
		return nil, -1, fmt.Errorf("no columns in %q", stmt)
	}
	var defs [][]string
	depth, start, end := 0, open+1, -1
	for i := open; i < len(toks) && end < 0; i++ {
		switch toks[i] {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				defs, end = append(defs, toks[start:i]), i
			}
		case ",":
			if depth == 1 {
				defs, start = append(defs, toks[start:i]), i+1
			}
		}
	}
	if end < 0 {
		return nil, -1, fmt.Errorf("columns not closed in %q", stmt)
	}
	if keyword(toks[end+1:], "WITHOUT", "ROWID") >= 0 {
		return nil, -1, errors.New("a WITHOUT ROWID table is not read")
	}
	var cols []column
	rowid, pkCols, field := -1, []string(nil), 0
	for _, d := range defs {
		if len(d) == 0 {
			continue
		}
		switch strings.ToUpper(d[0]) {
		case "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN":
			if k := keyword(d, "PRIMARY", "KEY"); k >= 0 {
				pkCols = listed(d[k+2:])
			}
			continue
		}
		c := define(d)
		if c.field == 0 {
			c.field = field
			field++
		}
		cols = append(cols, c)
		if k := keyword(d, "PRIMARY", "KEY"); k >= 0 && c.typ == "INTEGER" && !(k+2 < len(d) && strings.EqualFold(d[k+2], "DESC")) {
			rowid = len(cols) - 1
		}
	}
	if len(pkCols) == 1 {
		for i, c := range cols {
			if strings.EqualFold(c.name, pkCols[0]) && c.typ == "INTEGER" {
				rowid = i
			}
		}
	}
	if len(cols) == 0 {
		return nil, -1, fmt.Errorf("no columns in %q", stmt)
	}
	return cols, rowid, nil
}

// constraint are the words that end a column's type.
var constraint = map[string]bool{"CONSTRAINT": true, "PRIMARY": true, "NOT": true, "NULL": true, "UNIQUE": true,
	"CHECK": true, "DEFAULT": true, "COLLATE": true, "REFERENCES": true, "GENERATED": true, "AS": true}

// define reads one column's definition: its name, its type (the words
// up to the first constraint), whether it is a generated VIRTUAL column
// (field -1; else 0, for the caller to number) and its DEFAULT.
func define(d []string) column {
	c := column{name: unquote(d[0])}
	i := 1
	var typ []string
	for ; i < len(d) && !constraint[strings.ToUpper(d[i])]; i++ {
		typ = append(typ, unquote(d[i]))
	}
	c.typ = strings.ToUpper(strings.Join(typ, " "))
	depth := 0
	for ; i < len(d); i++ {
		switch w := strings.ToUpper(d[i]); {
		case w == "(":
			depth++
		case w == ")":
			depth--
		case depth > 0:
		case w == "AS" && i+1 < len(d) && d[i+1] == "(":
			// Generated: VIRTUAL unless STORED follows its expression.
			c.field = -1
		case w == "STORED":
			c.field = 0
		case w == "DEFAULT":
			c.def, c.defExpr = literal(d[i+1:], c.typ)
		}
	}
	return c
}

// literal reads a DEFAULT the way SQLite gives it to rows written before
// the column was added, where that is plain: NULL, an integer in a column
// of INTEGER affinity, a string in one of TEXT affinity. Any other (a
// real, a blob, a value affinity would convert, an expression) is
// reported as not read rather than guessed.
func literal(d []string, typ string) (Value, bool) {
	if len(d) == 0 {
		return Value{}, true
	}
	w := d[0]
	if w == "-" && len(d) > 1 {
		w += d[1]
	}
	switch {
	case strings.EqualFold(w, "NULL"):
		return Value{}, false
	case strings.Contains(typ, "INT"):
		if n, err := strconv.ParseInt(w, 10, 64); err == nil {
			return Value{Kind: Integer, Int: n}, false
		}
	case strings.Contains(typ, "CHAR") || strings.Contains(typ, "CLOB") || strings.Contains(typ, "TEXT"):
		if len(w) >= 2 && w[0] == '\'' {
			return Value{Kind: Text, Bytes: []byte(unquote(w))}, false
		}
	}
	return Value{}, true
}

// keyword is where the words a, b follow each other in d, or -1.
func keyword(d []string, a, b string) int {
	for i := 0; i+1 < len(d); i++ {
		if strings.EqualFold(d[i], a) && strings.EqualFold(d[i+1], b) {
			return i
		}
	}
	return -1
}

// listed reads the names in "( a , b )" at the start of d.
func listed(d []string) []string {
	if len(d) == 0 || d[0] != "(" {
		return nil
	}
	var out []string
	collate := false
	for _, t := range d[1:] {
		switch t {
		case ")":
			return out
		case ",":
			collate = false
		default:
			switch {
			case strings.EqualFold(t, "COLLATE"):
				collate = true
			case collate, strings.EqualFold(t, "ASC"), strings.EqualFold(t, "DESC"):
			default:
				out = append(out, unquote(t))
			}
		}
	}
	return out
}

// tokens splits SQL into words, quoted names and strings (kept with
// their quotes) and single marks, leaving out space and comments.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(s)
			}
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
		case c == '"' || c == '`' || c == '\'' || c == '[':
			j := quoted(s, i)
			out = append(out, s[i:j])
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			// A number: digits, a point, an exponent with its sign.
			j := i + 1
			for j < len(s) && (s[j] == '.' || s[j] >= '0' && s[j] <= '9' || s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z' ||
				(s[j] == '+' || s[j] == '-') && s[j-1]|0x20 == 'e') {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case c == '_' || c == '$' || c >= 0x80 || c|0x20 >= 'a' && c|0x20 <= 'z':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] == '$' || s[j] >= 0x80 || s[j] >= '0' && s[j] <= '9' || s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			out = append(out, s[i:i+1])
			i++
		}
	}
	return out
}

// quoted is the end of the quoted name or string that begins at s[i]; a
// doubled quote inside it is one quote.
func quoted(s string, i int) int {
	end := s[i]
	if end == '[' {
		end = ']'
	}
	for j := i + 1; j < len(s); j++ {
		if s[j] != end {
			continue
		}
		if end != ']' && j+1 < len(s) && s[j+1] == end {
			j++
			continue
		}
		return j + 1
	}
	return len(s)
}

// unquote takes the quotes off a name.
func unquote(t string) string {
	if len(t) < 2 {
		return t
	}
	switch q := t[0]; q {
	case '"', '`', '\'':
		if t[len(t)-1] == q {
			return strings.ReplaceAll(t[1:len(t)-1], string([]byte{q, q}), string(q))
		}
	case '[':
		if t[len(t)-1] == ']' {
			return t[1 : len(t)-1]
		}
	}
	return t
}
