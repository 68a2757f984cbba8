package opencode

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/platform"

	// The pure-Go SQLite driver: no cgo, so skillsync still cross-builds
	// for every system it ships for.
	_ "modernc.org/sqlite"
)

// settle is how long before the import a database row must have been
// written for the cursor to move past it: a transaction that took its
// time before committing is still read by the next import.
const settle = 10 * time.Second

// holdFor bounds how long a skill or read call still running (waiting for
// the user's permission, say) keeps the cursor before it; a call OpenCode
// never finished (it was killed) holds it no longer than this.
const holdFor = 24 * time.Hour

// maxDirLen bounds a session's directory read from a database.
const maxDirLen = 4096

// maxIDLen bounds the session and part ids read from a database: OpenCode's
// are about 30 characters; a longer one is a hostile file's, and is not
// read into memory.
const maxIDLen = 256

// maxRows bounds the parts read from one database in one import.
const maxRows = 100_000

// sqliteMagic begins every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// databases maps the marks' keys of the SQLite databases OpenCode keeps
// (a file's name in data, else its absolute path) to their paths:
// opencode.db, the databases of other release channels
// (opencode-<channel>.db) and $OPENCODE_DB when that file exists.
func (im *Importer) databases() map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(im.data)
	for _, e := range entries {
		name := e.Name()
		if name == "opencode.db" || strings.HasPrefix(name, "opencode-") && strings.HasSuffix(name, ".db") {
			out[name] = filepath.Join(im.data, name)
		}
	}
	db := im.Database
	if db == "" {
		return out
	}
	if filepath.IsLocal(db) {
		db = filepath.Join(im.data, db)
	}
	if _, err := os.Lstat(db); err != nil || !filepath.IsAbs(db) {
		return out
	}
	if rel, err := filepath.Rel(im.data, db); err == nil && filepath.IsLocal(rel) {
		out[filepath.ToSlash(rel)] = filepath.Clean(db)
	} else {
		out[filepath.Clean(db)] = filepath.Clean(db)
	}
	return out
}

// importDatabases reads every database, each from its cursor; one that
// cannot be read is said in b.Unreadable and keeps its mark.
func (im *Importer) importDatabases(ctx context.Context, b *agent.Batch, since time.Time, done agent.Marks) error {
	dbs := im.databases()
	keys := make([]string, 0, len(dbs))
	for k := range dbs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		path := dbs[key]
		prev, seen := done[key]
		r, err := im.readDatabase(ctx, path, prev, seen, since)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if seen {
				b.Marks[key] = prev
			}
			b.Unreadable = append(b.Unreadable, err.Error())
			continue
		}
		b.Marks[key] = r.mark
		b.Events = append(b.Events, r.events...)
		b.Files += r.rows
		b.Malformed += r.malformed
		b.TooLong += r.tooLong
		b.Before += r.before
	}
	return nil
}

// dbRead is what one read of a database found.
type dbRead struct {
	mark                             agent.Mark
	events                           []agent.Event
	rows, malformed, tooLong, before int
	more                             bool // stopped at the row limit
}

// fileState is the size and time of a database and its write-ahead log
// together: unchanged, nothing was written.
func fileState(path string) (size int64, mtime time.Time, err error) {
	info, err := os.Lstat(path)
	if err != nil {
		return 0, time.Time{}, err
	}
	if !info.Mode().IsRegular() {
		return 0, time.Time{}, fmt.Errorf("not a regular file")
	}
	size, mtime = info.Size(), info.ModTime().UTC()
	if wal, err := os.Lstat(path + "-wal"); err == nil {
		size += wal.Size()
		if t := wal.ModTime().UTC(); t.After(mtime) {
			mtime = t
		}
	}
	return size, mtime, nil
}

// header reads the first 100 bytes of the database at path without
// following a link, and tells whether it is in WAL mode.
func header(path string) (wal bool, err error) {
	f, err := platform.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := make([]byte, 100)
	if _, err := io.ReadFull(f, h); err != nil || !bytes.HasPrefix(h, sqliteMagic) {
		return false, errors.New("not a SQLite database")
	}
	return h[18] == 2 || h[19] == 2, nil
}

// dsn is the URI that opens the database at path read-only. A database in
// WAL mode whose -wal file is missing (OpenCode is not running) is opened
// immutable: SQLite would otherwise create the -wal and -shm files beside
// it. With the -wal file there, the reader shares OpenCode's log and
// index as any reader does, and sees what OpenCode committed.
func dsn(path string, immutable bool) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x → /C:/x
	}
	q := "mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)"
	if immutable {
		q += "&immutable=1"
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q}
	return u.String()
}

// readDatabase reads the parts written to the database at path after the
// cursor of prev (its Offset, in OpenCode's milliseconds). An untouched
// database (its size and time, with its -wal's, those of prev) is not
// opened.
func (im *Importer) readDatabase(ctx context.Context, path string, prev agent.Mark, seen bool, since time.Time) (*dbRead, error) {
	fail := func(err error) (*dbRead, error) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	size, mtime, err := fileState(path)
	if err != nil {
		return fail(err)
	}
	if seen && prev.Size == size && prev.ModTime.Equal(mtime) {
		return &dbRead{mark: prev}, nil
	}
	wal, err := header(path)
	if err != nil {
		return fail(err)
	}
	_, werr := os.Lstat(path + "-wal")
	immutable := wal && werr != nil
	db, err := sql.Open("sqlite", dsn(path, immutable))
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	cursor := int64(0)
	if seen {
		cursor = prev.Offset
	}
	r, err := im.readParts(ctx, db, path, cursor, since)
	if err != nil {
		return fail(err)
	}
	if immutable {
		// Read without SQLite's locks: had OpenCode started and written
		// the file meanwhile, what was read may be torn.
		if s, m, err := fileState(path); err != nil || s != size || !m.Equal(mtime) {
			return fail(errors.New("changed while read without a log; it is read again next time"))
		}
	}
	r.mark = agent.Mark{Offset: max(cursor, r.mark.Offset), Size: size, ModTime: mtime, Hash: "sqlite"}
	if r.more {
		// Not all read: the next import opens the file though unchanged.
		r.mark.Size = -1
	}
	return r, nil
}

// readParts reads the parts of the workspace's sessions written after
// cursor, at most im.rowLimit() of them, oldest first. The returned mark's
// Offset is the next cursor: the newest part read, but no later than
// settle before now, nor than the oldest skill or read call still running
// (for at most holdFor), so that both are read again. A read that stopped
// at the limit ends its cursor before the last millisecond it read, whose
// other parts may be unread; the next import goes on from there.
func (im *Importer) readParts(ctx context.Context, db *sql.DB, path string, cursor int64, since time.Time) (*dbRead, error) {
	if err := checkSchema(ctx, db); err != nil {
		return nil, err
	}
	now := time.Now()
	next := cursor
	hold := int64(-1)
	r := &dbRead{}
	read := 0
	err := im.eachPart(ctx, db, cursor, func(id string, updated int64, data []byte, tooLong, ours bool) {
		read++
		next = max(next, updated)
		if !ours {
			return
		}
		r.rows++
		if tooLong {
			r.tooLong++
			return
		}
		var p partRecord
		if err := json.Unmarshal(data, &p); err != nil {
			r.malformed++
			return
		}
		if p.running() && time.UnixMilli(updated).After(now.Add(-holdFor)) && (hold < 0 || updated < hold) {
			hold = updated
		}
		ev, ok := p.event()
		if !ok {
			return
		}
		if ev.At.Before(since) {
			r.before++
			return
		}
		ev.Where = path + "#part/" + id
		ev.Path = im.ws.Configured(ev.Path)
		r.events = append(r.events, ev)
	})
	if err != nil {
		return nil, err
	}
	if read >= im.rowLimit() {
		r.more = true
		// 100,000 parts in one millisecond are a hostile file's: the
		// cursor passes them rather than stand still.
		if next-1 > cursor {
			next--
		}
	}
	next = min(next, now.Add(-settle).UnixMilli())
	if hold >= 0 {
		next = min(next, hold-1)
	}
	r.mark.Offset = next
	return r, nil
}

// rowLimit bounds the parts one import reads from one database, so that
// a database of millions of parts (a hostile one, or years of sessions
// never imported) is read over several imports, each in bounded memory.
func (im *Importer) rowLimit() int {
	if im.maxRows > 0 {
		return im.maxRows
	}
	return maxRows
}

// eachPart hands fn the parts of the workspace's sessions updated after
// cursor, oldest first, at most im.rowLimit() of them; a part's data over
// maxRecord bytes is not read (tooLong), and ours says whether its
// session ran in the workspace.
func (im *Importer) eachPart(ctx context.Context, db *sql.DB, cursor int64, fn func(id string, updated int64, data []byte, tooLong, ours bool)) error {
	var where []string
	args := []any{maxRecord, maxRecord}
	for _, ws := range im.ws.Paths() {
		prefix := ws + string(filepath.Separator)
		where = append(where, "s.directory = ? OR substr(s.directory, 1, ?) = ?")
		args = append(args, ws, len(prefix), prefix)
	}
	args = append(args, cursor, maxIDLen, im.rowLimit())
	rows, err := db.QueryContext(ctx, `SELECT CAST(p.id AS TEXT), CAST(p.time_updated AS INTEGER), coalesce(octet_length(p.data) > ?, 0),
		CASE WHEN octet_length(p.data) <= ? THEN p.data END, CAST(s.directory AS TEXT)
		FROM part p JOIN session s ON p.session_id = s.id
		WHERE length(s.directory) <= `+fmt.Sprint(maxDirLen)+` AND length(CAST(s.id AS TEXT)) <= `+fmt.Sprint(maxIDLen)+` AND CAST(s.id AS TEXT) != ''
		AND (`+strings.Join(where, " OR ")+`)
		AND p.time_updated > ? AND length(CAST(p.id AS TEXT)) <= ?
		ORDER BY p.time_updated, p.id LIMIT ?`, args...)
	if err != nil {
		return schemaError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, dir sql.NullString
		var updated int64
		var long bool
		var data []byte
		if err := rows.Scan(&id, &updated, &long, &data, &dir); err != nil {
			return err
		}
		// A folder whose name only begins like the workspace's is
		// read, so the cursor moves past it, but not counted.
		fn(id.String, updated, data, long, im.ws.Within(dir.String))
	}
	return rows.Err()
}

// checkSchema makes sure the tables and columns read here are there.
func checkSchema(ctx context.Context, db *sql.DB) error {
	for _, table := range []string{"session", "part"} {
		want := map[string][]string{"session": {"id", "directory"}, "part": {"id", "session_id", "time_updated", "data"}}[table]
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return err
			}
			have[name] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, col := range want {
			if !have[col] {
				return fmt.Errorf("not the schema of OpenCode's sessions that skillsync reads: no column %s.%s", table, col)
			}
		}
	}
	return nil
}

// schemaError says that a database lacks the tables or columns read here.
func schemaError(err error) error {
	if msg := err.Error(); strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column") {
		return fmt.Errorf("not the schema of OpenCode's sessions that skillsync reads: %w", err)
	}
	return err
}

// running reports a skill or read call that has not finished.
func (p *partRecord) running() bool {
	return p.Type == "tool" && (p.Tool == "skill" || p.Tool == "read") && (p.State.Status == "pending" || p.State.Status == "running")
}
