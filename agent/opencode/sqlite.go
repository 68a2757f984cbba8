package opencode

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/sqlitefile"
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
		for _, where := range r.malformed {
			b.Skip(where)
		}
		b.TooLong += r.tooLong
		b.Before += r.before
	}
	return nil
}

// dbRead is what one read of a database found.
type dbRead struct {
	mark                  agent.Mark
	events                []agent.Event
	rows, tooLong, before int
	// malformed names the parts that did not parse, by row id.
	malformed []string
	more      bool // stopped at the row limit
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

// tries bounds the reads of a database that its owner rewrote while it
// was read (a checkpoint, or a log begun again); retryAfter is the wait
// before the next.
const (
	tries      = 3
	retryAfter = 200 * time.Millisecond
)

// racy is how recent a database's time must be for its mark not to be
// trusted: a file system's clock ticks in up to 2 s (FAT, exFAT).
const racy = 2 * time.Second

// readDatabase reads the parts written to the database at path after the
// cursor of prev (its Offset, in OpenCode's milliseconds). An untouched
// database (its size and time, with its -wal's, those of prev) is not
// opened. The database is read without SQLite and without its locks
// (internal/sqlitefile): what OpenCode commits while it is read is in the
// next import, and a read that a checkpoint may have torn is done again.
func (im *Importer) readDatabase(ctx context.Context, path string, prev agent.Mark, seen bool, since time.Time) (*dbRead, error) {
	fail := func(err error) (*dbRead, error) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cursor, row := int64(0), int64(0)
	if seen {
		cursor, row = prev.Offset, prev.Row
	}
	for try := 1; ; try++ {
		size, mtime, err := fileState(path)
		if err != nil {
			return fail(err)
		}
		if seen && prev.Size == size && prev.ModTime.Equal(mtime) {
			return &dbRead{mark: prev}, nil
		}
		r, changed, err := im.readOnce(ctx, path, cursor, row, since)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil && !changed {
			// A file that fails to read while OpenCode writes it may
			// have been read mid-checkpoint: read it again.
			s, m, serr := fileState(path)
			changed = serr == nil && (s != size || !m.Equal(mtime))
		}
		if !changed {
			if err != nil {
				return fail(err)
			}
			r.mark = agent.Mark{Offset: max(cursor, r.mark.Offset), Row: r.mark.Row, Size: size, ModTime: mtime, Hash: "sqlite"}
			if r.more || time.Since(mtime) < racy {
				// Not all read, or written in the last tick of the
				// file's clock (a write after the read could leave the
				// same size and time): the next import opens the file
				// though it looks unchanged.
				r.mark.Size = -1
			}
			return r, nil
		}
		if try == tries {
			return fail(fmt.Errorf("rewritten while read, %d times; it is read again next time", tries))
		}
		// A checkpoint moves the file, then the log begins again: let
		// the writer finish before reading again.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retryAfter):
		}
	}
}

// readOnce reads the database once, and tells whether it was rewritten
// meanwhile.
func (im *Importer) readOnce(ctx context.Context, path string, cursor, row int64, since time.Time) (*dbRead, bool, error) {
	db, err := sqlitefile.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer db.Close()
	r, err := im.readParts(ctx, db, path, cursor, row, since)
	return r, db.Changed(), err
}

// readParts reads the parts of the workspace's sessions written after
// cursor, or whose rowid is past row (when row is known, above 0), at
// most im.rowLimit() of them, oldest first. The returned mark's Offset is
// the next cursor: the newest part read, but no later than settle before
// now, nor than the oldest skill or read call still running (for at most
// holdFor), so that both are read again. A read that stopped at the limit
// ends its cursor before the last millisecond it read, whose other parts
// may be unread; the next import goes on from there. Its Row is the
// largest rowid in the table, but before the first call still running:
// OpenCode dates time_updated by the machine's clock, and a part written
// or completed after the clock stepped back is older than the cursor, but
// takes a new rowid or keeps the one of the running call. A read that
// stopped at the limit moves Row too: the parts it left are newer than
// its cursor (those older by their time were read first), and kept
// behind Row, the same oldest ones would fill every read.
func (im *Importer) readParts(ctx context.Context, db *sqlitefile.DB, path string, cursor, row int64, since time.Time) (*dbRead, error) {
	tabs, err := openTables(ctx, db)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	next := cursor
	hold, holdRow := int64(-1), int64(-1)
	r := &dbRead{}
	read := 0
	last, err := im.eachPart(ctx, tabs, cursor, row, func(id string, rowid, updated int64, data []byte, tooLong, ours bool) {
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
			r.malformed = append(r.malformed, path+": part "+id)
			return
		}
		if p.running() && time.UnixMilli(updated).After(now.Add(-holdFor)) {
			if hold < 0 || updated < hold {
				hold = updated
			}
			if holdRow < 0 || rowid < holdRow {
				holdRow = rowid
			}
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
	r.mark.Row = last
	if holdRow >= 0 {
		r.mark.Row = min(last, holdRow-1)
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

// tables are the two tables read, and where their columns are.
type tables struct {
	session, part                      *sqlitefile.Table
	sessionID, directory               int
	partID, partSession, updated, data int
}

// openTables finds the tables and columns read here, or says that the
// database has another schema.
func openTables(ctx context.Context, db *sqlitefile.DB) (*tables, error) {
	found, err := db.Tables(ctx, "session", "part")
	if err != nil {
		return nil, schemaError(err)
	}
	t := &tables{session: found[0], part: found[1]}
	for _, c := range []struct {
		tab  *sqlitefile.Table
		name string
		at   *int
	}{
		{t.session, "id", &t.sessionID}, {t.session, "directory", &t.directory},
		{t.part, "id", &t.partID}, {t.part, "session_id", &t.partSession},
		{t.part, "time_updated", &t.updated}, {t.part, "data", &t.data},
	} {
		if *c.at = c.tab.Column(c.name); *c.at < 0 {
			return nil, fmt.Errorf("not the schema of OpenCode's sessions that skillsync reads: no column %s.%s", c.tab.Name, c.name)
		}
	}
	return t, nil
}

// schemaError says that a database lacks a table read here.
func schemaError(err error) error {
	if errors.Is(err, sqlitefile.ErrNoTable) {
		return fmt.Errorf("not the schema of OpenCode's sessions that skillsync reads: %w", err)
	}
	return err
}

// found is a part eachPart will hand on: where it is, to read its data
// once it is among the oldest.
type found struct {
	updated int64
	rowid   int64
	id      string
	dir     string
	ref     sqlitefile.Ref
}

// eachPart hands fn the parts of the workspace's sessions updated after
// cursor or, when row is above 0, whose rowid is past row, oldest first
// (by time_updated, then id), at most im.rowLimit() of them; a part's data
// over maxRecord bytes is not read (tooLong), and ours says whether its
// session ran in the workspace. It returns the largest rowid of the
// table. The sessions are read first (their ids are kept, each folder
// once); then the parts, keeping the oldest im.rowLimit() in a heap, so
// that the parts held are bounded however many the database has; then
// their data, in order.
func (im *Importer) eachPart(ctx context.Context, t *tables, cursor, row int64, fn func(id string, rowid, updated int64, data []byte, tooLong, ours bool)) (last int64, err error) {
	dirs, err := im.sessionDirs(ctx, t)
	if err != nil {
		return 0, err
	}
	keep := &oldest{limit: im.rowLimit()}
	err = t.part.Scan(ctx, func(r *sqlitefile.Row) error {
		last = max(last, r.Rowid())
		if r.Len(t.partSession) > maxIDLen || r.Len(t.partID) > maxIDLen {
			return nil
		}
		sid, err := text(r, t.partSession)
		if err != nil {
			return err
		}
		dir, ok := dirs[sid]
		if !ok {
			return nil
		}
		updated, ok, err := integer(r, t.updated)
		if err != nil || !ok || updated <= cursor && (row <= 0 || r.Rowid() <= row) {
			return err
		}
		if keep.full() && keep.parts[0].updated < updated {
			return nil // newer than every part kept: its id need not be read
		}
		id, err := text(r, t.partID)
		if err != nil {
			return err
		}
		keep.add(found{updated: updated, id: id, dir: dir, ref: r.Ref(), rowid: r.Rowid()})
		return nil
	})
	if err != nil {
		return 0, err
	}
	parts := keep.sorted()
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		r, err := t.part.Row(p.ref)
		if err != nil {
			return 0, err
		}
		var data []byte
		long := r.Len(t.data) > maxRecord
		if !long {
			v, err := r.Column(t.data)
			if err != nil {
				return 0, err
			}
			data = v.Bytes
		}
		// A folder whose name only begins like the workspace's is
		// read, so the cursor moves past it, but not counted.
		fn(p.id, p.rowid, p.updated, data, long, im.ws.Within(p.dir))
	}
	return last, nil
}

// sessionDirs maps the sessions whose directory is a workspace path or
// under one (by its name) to their directory.
func (im *Importer) sessionDirs(ctx context.Context, t *tables) (map[string]string, error) {
	var prefixes []string
	for _, ws := range im.ws.Paths() {
		prefixes = append(prefixes, ws, ws+string(filepath.Separator))
	}
	dirs := map[string]string{}
	folders := map[string]string{} // each folder's one copy
	err := t.session.Scan(ctx, func(r *sqlitefile.Row) error {
		if r.Len(t.directory) > maxDirLen || r.Len(t.sessionID) > maxIDLen {
			return nil
		}
		dir, err := text(r, t.directory)
		if err != nil {
			return err
		}
		in := false
		for i := 0; i < len(prefixes) && !in; i += 2 {
			in = dir == prefixes[i] || strings.HasPrefix(dir, prefixes[i+1])
		}
		if !in {
			return nil
		}
		id, err := text(r, t.sessionID)
		if err == nil && id != "" {
			if same, ok := folders[dir]; ok {
				dir = same
			} else {
				folders[dir] = dir
			}
			dirs[id] = dir
		}
		return err
	})
	return dirs, err
}

// text reads column i as text, as SQL's CAST would: a number in decimal,
// NULL as "".
func text(r *sqlitefile.Row, i int) (string, error) {
	v, err := r.Column(i)
	switch v.Kind {
	case sqlitefile.Integer:
		return strconv.FormatInt(v.Int, 10), err
	case sqlitefile.Float:
		return strconv.FormatFloat(v.Float, 'g', 15, 64), err
	}
	return string(v.Bytes), err
}

// integer reads column i as a number of milliseconds; a text, a blob or
// NULL is none.
func integer(r *sqlitefile.Row, i int) (int64, bool, error) {
	v, err := r.Column(i)
	switch v.Kind {
	case sqlitefile.Integer:
		return v.Int, true, err
	case sqlitefile.Float:
		if v.Float >= -(1<<62) && v.Float <= 1<<62 {
			return int64(v.Float), true, err
		}
	}
	return 0, false, err
}

// oldest keeps the limit oldest parts it is given: a heap whose top is
// the newest kept, which the next older part replaces.
type oldest struct {
	limit int
	parts []found
}

func (o *oldest) full() bool { return len(o.parts) >= o.limit }

// newer orders parts as the query did: by time, then id.
func newer(a, b found) bool {
	if a.updated != b.updated {
		return a.updated > b.updated
	}
	return a.id > b.id
}

func (o *oldest) Len() int           { return len(o.parts) }
func (o *oldest) Less(i, j int) bool { return newer(o.parts[i], o.parts[j]) }
func (o *oldest) Swap(i, j int)      { o.parts[i], o.parts[j] = o.parts[j], o.parts[i] }
func (o *oldest) Push(x any)         { o.parts = append(o.parts, x.(found)) }
func (o *oldest) Pop() any {
	p := o.parts[len(o.parts)-1]
	o.parts = o.parts[:len(o.parts)-1]
	return p
}

func (o *oldest) add(p found) {
	if !o.full() {
		heap.Push(o, p)
		return
	}
	if newer(o.parts[0], p) {
		o.parts[0] = p
		heap.Fix(o, 0)
	}
}

// sorted is the parts kept, oldest first.
func (o *oldest) sorted() []found {
	out := slices.Clone(o.parts)
	slices.SortFunc(out, func(a, b found) int {
		if newer(a, b) {
			return 1
		}
		if newer(b, a) {
			return -1
		}
		return 0
	})
	return out
}

// running reports a skill or read call that has not finished.
func (p *partRecord) running() bool {
	return p.Type == "tool" && (p.Tool == "skill" || p.Tool == "read") && (p.State.Status == "pending" || p.State.Status == "running")
}
