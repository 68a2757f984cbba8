package sqlitefile

import (
	"context"
	"errors"
	"fmt"
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
	cols  []string
	rowid int // the column that is the rowid (INTEGER PRIMARY KEY), or -1
}

// schema is sqlite_schema: its b-tree is rooted at page 1.
func (db *DB) schema() *Table {
	return &Table{db: db, Name: "sqlite_schema", root: 1, cols: []string{"type", "name", "tbl_name", "rootpage", "sql"}, rowid: -1}
}

// Table finds the table called name (as SQLite does, whatever its case)
// in the schema, and its columns in the statement that made it.
func (db *DB) Table(ctx context.Context, name string) (*Table, error) {
	var found *Table
	err := db.schema().Scan(ctx, func(r *Row) error {
		typ, err := r.Column(0)
		if err != nil || typ.Kind != Text || string(typ.Bytes) != "table" {
			return err
		}
		n, err := r.Column(1)
		if err != nil || n.Kind != Text || !strings.EqualFold(string(n.Bytes), name) {
			return err
		}
		root, err := r.Column(3)
		if err != nil {
			return err
		}
		stmt, err := r.Column(4)
		if err != nil {
			return err
		}
		if root.Kind != Integer || root.Int <= 0 || root.Int > int64(db.pages) {
			return fmt.Errorf("%w: table %s: root page %d", ErrMalformed, name, root.Int)
		}
		cols, rowid, err := columns(string(stmt.Bytes))
		if err != nil {
			return fmt.Errorf("table %s: %w", name, err)
		}
		found = &Table{db: db, Name: string(n.Bytes), root: uint32(root.Int), cols: cols, rowid: rowid}
		return errStop
	})
	if err != nil && err != errStop {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoTable, name)
	}
	return found, nil
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// Columns are the table's columns, in order.
func (t *Table) Columns() []string { return t.cols }

// Column is the index of the column called name (whatever its case), or
// -1.
func (t *Table) Column(name string) int {
	for i, c := range t.cols {
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

// Row reads again the row that ref names; it stays valid.
func (t *Table) Row(ref Ref) (*Row, error) {
	p, err := t.db.loadPage(ref.page, make([]byte, t.db.pageSize))
	if err != nil {
		return nil, err
	}
	if p.kind != leafTable || ref.cell < 0 || ref.cell >= p.cells {
		return nil, malformed(ref.page, "cell %d is not a row", ref.cell)
	}
	r := &Row{t: t}
	return r, r.load(&p, ref.cell)
}

// columns reads the column names of a CREATE TABLE statement, and which
// of them is the rowid: a column of type INTEGER that is the primary key
// on its own (but not PRIMARY KEY DESC, as SQLite keeps for
// compatibility). A WITHOUT ROWID table is stored another way, and is not
// read.
func columns(stmt string) ([]string, int, error) {
	toks := tokens(stmt)
	open := -1
	for i, t := range toks {
		if t == "(" {
			open = i
			break
		}
	}
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
	for i := end + 1; i+1 < len(toks); i++ {
		if strings.EqualFold(toks[i], "WITHOUT") && strings.EqualFold(toks[i+1], "ROWID") {
			return nil, -1, errors.New("a WITHOUT ROWID table is not read")
		}
	}
	var cols []string
	types := map[string]string{}
	rowid, pkCols := -1, []string(nil)
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
		name := unquote(d[0])
		cols = append(cols, name)
		if len(d) > 1 {
			types[strings.ToLower(name)] = strings.ToUpper(d[1])
		}
		if k := keyword(d, "PRIMARY", "KEY"); k >= 0 && len(d) > 1 && strings.EqualFold(d[1], "INTEGER") &&
			!(k+2 < len(d) && strings.EqualFold(d[k+2], "DESC")) {
			rowid = len(cols) - 1
		}
	}
	if len(pkCols) == 1 && types[strings.ToLower(pkCols[0])] == "INTEGER" {
		for i, c := range cols {
			if strings.EqualFold(c, pkCols[0]) {
				rowid = i
			}
		}
	}
	if len(cols) == 0 {
		return nil, -1, fmt.Errorf("no columns in %q", stmt)
	}
	return cols, rowid, nil
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
	for _, t := range d[1:] {
		switch t {
		case ")":
			return out
		case ",":
		default:
			if !strings.EqualFold(t, "ASC") && !strings.EqualFold(t, "DESC") {
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
		case c == '_' || c == '$' || c >= 0x80 || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z':
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
