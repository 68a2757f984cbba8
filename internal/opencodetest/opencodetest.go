// Package opencodetest makes OpenCode databases for tests: a real SQLite
// file with the tables OpenCode's migration creates
// (testdata/agents/opencode/schema.sql), filled the way OpenCode fills
// them.
package opencodetest

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// Schema returns the statements of testdata/agents/opencode/schema.sql.
func Schema(t testing.TB) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "agents", "opencode", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, stmt := range strings.Split(string(data), "--> statement-breakpoint") {
		if strings.TrimSpace(stmt) != "" {
			out = append(out, stmt)
		}
	}
	return out
}

// DB is an OpenCode database open for writing, as OpenCode has it.
type DB struct {
	*sql.DB
	t testing.TB
}

// Create makes the database at path with OpenCode's tables. With wal, it
// is in WAL mode as OpenCode sets it, and checkpoints only when closed,
// so what is written stays in the -wal file while the DB is open.
func Create(t testing.TB, path string, wal bool) *DB {
	t.Helper()
	q := "?_pragma=foreign_keys(1)"
	if wal {
		q += "&_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)"
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+q)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, stmt := range Schema(t) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return &DB{DB: db, t: t}
}

// Exec runs a statement or fails the test.
func (d *DB) Exec(query string, args ...any) {
	d.t.Helper()
	if _, err := d.DB.Exec(query, args...); err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
}

// Session adds a project (if new) and a session that ran in dir.
func (d *DB) Session(project, id, dir string, at int64) {
	d.t.Helper()
	d.Exec("INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES (?, ?, ?, ?, '[]')", project, dir, at, at)
	d.Exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, ?, ?, ?, '', '1.2.0', ?, ?)", id, project, id, dir, at, at)
}

// Message adds a message to a session.
func (d *DB) Message(session, id string, at int64) {
	d.t.Helper()
	d.Exec("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)", id, session, at, at, `{"role":"assistant","time":{"created":`+jsonInt(at)+`}}`)
}

// Part writes a part as OpenCode does when a part is created or updated:
// an upsert of its data, with time_updated the time of the write.
func (d *DB) Part(session, message, id string, updated int64, data string) {
	d.t.Helper()
	d.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated`, id, message, session, updated, updated, data)
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Migrate copies OpenCode's JSON storage (data/storage) into the database
// as OpenCode's first start does (packages/opencode/src/storage/
// json-migration.ts): ids from the file names, a record's JSON without its
// ids as data, times from its "time" or at.
func (d *DB) Migrate(storage string, at int64) {
	d.t.Helper()
	read := func(p string) map[string]any {
		data, err := os.ReadFile(p)
		if err != nil {
			d.t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			d.t.Fatalf("%s: %v", p, err)
		}
		return v
	}
	stamp := func(v map[string]any, key string) int64 {
		if tm, ok := v["time"].(map[string]any); ok {
			if n, ok := tm[key].(float64); ok {
				return int64(n)
			}
		}
		return at
	}
	glob := func(pattern string) []string {
		m, err := filepath.Glob(filepath.Join(storage, pattern))
		if err != nil {
			d.t.Fatal(err)
		}
		return m
	}
	sessions := map[string]bool{}
	for _, p := range glob("session/*/*.json") {
		v := read(p)
		id := strings.TrimSuffix(filepath.Base(p), ".json")
		project := filepath.Base(filepath.Dir(p))
		dir, _ := v["directory"].(string)
		d.Exec("INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES (?, ?, ?, ?, '[]')", project, dir, at, at)
		d.Exec("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			id, project, v["parentID"], "", dir, "", "", stamp(v, "created"), stamp(v, "updated"))
		sessions[id] = true
	}
	messages := map[string]string{}
	for _, p := range glob("message/*/*.json") {
		session := filepath.Base(filepath.Dir(p))
		if !sessions[session] {
			continue
		}
		v := read(p)
		id := strings.TrimSuffix(filepath.Base(p), ".json")
		delete(v, "id")
		delete(v, "sessionID")
		data, _ := json.Marshal(v)
		d.Exec("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)", id, session, stamp(v, "created"), stamp(v, "updated"), string(data))
		messages[id] = session
	}
	for _, p := range glob("part/*/*.json") {
		message := filepath.Base(filepath.Dir(p))
		session, ok := messages[message]
		if !ok {
			continue
		}
		v := read(p)
		id := strings.TrimSuffix(filepath.Base(p), ".json")
		delete(v, "id")
		delete(v, "messageID")
		delete(v, "sessionID")
		data, _ := json.Marshal(v)
		d.Exec("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)", id, message, session, stamp(v, "created"), stamp(v, "updated"), string(data))
	}
}
