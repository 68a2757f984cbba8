package opencode

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/opencodetest"
)

// Parts as OpenCode 1.2 keeps them in part.data: the part file's JSON
// without id, sessionID and messageID (packages/opencode/src/session/
// message-v2.ts ToolPart; tool/skill.ts; tool/read.ts).
func skillPart(call, name, status string, start int64) string {
	return `{"type":"tool","callID":"` + call + `","tool":"skill","state":{"status":"` + status + `","input":{"name":"` + name + `"},"output":"<skill_content name=\"` + name + `\">","title":"Loaded skill: ` + name + `","metadata":{},"time":{"start":` + itoa(start) + `,"end":` + itoa(start+400) + `}}}`
}

func readPart(call, path string, start int64) string {
	return `{"type":"tool","callID":"` + call + `","tool":"read","state":{"status":"completed","input":{"filePath":"` + path + `"},"output":"<file>","title":"SKILL.md","metadata":{},"time":{"start":` + itoa(start) + `,"end":` + itoa(start+30) + `}}}`
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// newDatabase makes a workspace path and a data folder holding
// opencode.db, made by a real SQLite (in WAL mode when wal is set).
func newDatabase(t *testing.T, wal bool) (ws, data, path string, db *opencodetest.DB) {
	t.Helper()
	ws, data = filepath.Join(t.TempDir(), "w"), t.TempDir()
	path = filepath.Join(data, "opencode.db")
	return ws, data, path, opencodetest.Create(t, path, wal)
}

// names lists the dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

const t0 = int64(1772359200000) // 2026-03-01

// TestImportDatabase: in a database as OpenCode 1.2 writes it, the
// workspace's completed skill calls are uses and its reads of a SKILL.md
// views; a refused call, a text part, another folder's session are not. A
// call still running is read again once it completed; a second import
// reads nothing; and no file is created beside the database.
func TestImportDatabase(t *testing.T) {
	ctx := context.Background()
	ws, data, _, db := newDatabase(t, false)
	db.Session("p1", "ses_1", ws, t0)
	db.Session("p1", "ses_2", filepath.Join(ws, "sub"), t0)
	db.Session("p2", "ses_9", ws+"-other", t0)
	for _, s := range []string{"1", "2", "9"} {
		db.Message("ses_"+s, "msg_"+s, t0)
	}
	db.Part("ses_1", "msg_1", "prt_a", t0+1000, `{"type":"text","text":"use the notes skill"}`)
	db.Part("ses_1", "msg_1", "prt_b", t0+2000, skillPart("call_b", "notes", "completed", t0+1500))
	db.Part("ses_1", "msg_1", "prt_c", t0+3000, readPart("call_c", filepath.Join(ws, ".opencode", "skills", "kept", "SKILL.md"), t0+2500))
	db.Part("ses_1", "msg_1", "prt_d", t0+4000, skillPart("call_d", "kept", "error", t0+3500))
	db.Part("ses_2", "msg_2", "prt_e", t0+5000, skillPart("call_e", "kept", "completed", t0+4500))
	db.Part("ses_9", "msg_9", "prt_f", t0+6000, skillPart("call_f", "notes", "completed", t0+5500))
	// Waiting for the user's permission since just now.
	now := time.Now().UnixMilli()
	db.Part("ses_1", "msg_1", "prt_g", now-60_000, skillPart("call_g", "notes", "running", now-60_000))
	before := names(t, data)
	// Written long enough ago that its mark is trusted (see racy).
	old := time.Now().Add(-10 * time.Second)
	if err := os.Chtimes(filepath.Join(data, "opencode.db"), old, old); err != nil {
		t.Fatal(err)
	}

	b, err := New(ws, data).Import(ctx, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range b.Events {
		if ev.View {
			got = append(got, ev.ID+":view:"+filepath.Base(filepath.Dir(ev.Path)))
		} else {
			got = append(got, ev.ID+":"+ev.Skill)
		}
	}
	if want := []string{"call_b:notes", "call_c:view:kept", "call_e:kept"}; !slices.Equal(got, want) || b.Files != 6 || b.Malformed != 0 || len(b.Unreadable) != 0 {
		t.Fatalf("events %v, batch %+v", got, b)
	}
	if !b.Events[1].View || b.Events[0].View || !b.Events[0].At.Equal(time.UnixMilli(t0+1500)) {
		t.Errorf("events %+v", b.Events)
	}
	if m := b.Marks["opencode.db"]; m.Offset != now-60_000-1 {
		t.Errorf("cursor %d, want before the running call %d", m.Offset, now-60_000)
	}
	if after := names(t, data); !slices.Equal(before, after) {
		t.Errorf("files beside the database: %v, were %v", after, before)
	}

	again, err := New(ws, data).Import(ctx, time.Time{}, b.Marks)
	if err != nil || len(again.Events) != 0 || again.Files != 0 {
		t.Fatalf("again: %+v %v", again, err)
	}
	db.Part("ses_1", "msg_1", "prt_g", now-1000, skillPart("call_g", "notes", "completed", now-60_000))
	third, err := New(ws, data).Import(ctx, time.Time{}, again.Marks)
	if err != nil || len(third.Events) != 1 || third.Events[0].ID != "call_g" {
		t.Fatalf("after the call completed: %+v %v", third, err)
	}
	since, err := New(ws, data).Import(ctx, time.UnixMilli(t0+4000), nil)
	if err != nil || len(since.Events) != 2 || since.Before != 2 {
		t.Errorf("since: %+v %v", since, err)
	}
}

// TestImportRereadsARecentDatabase: a database written in the last tick
// of its clock is read again next time though its size and time look
// the same, as a write after the read could have left them so.
func TestImportRereadsARecentDatabase(t *testing.T) {
	ctx := context.Background()
	ws, data, path, db := newDatabase(t, false)
	db.Session("p1", "ses_1", ws, t0)
	db.Message("ses_1", "msg_1", t0)
	db.Part("ses_1", "msg_1", "prt_a", t0+1000, skillPart("call_a", "notes", "completed", t0+500))
	b, err := New(ws, data).Import(ctx, time.Time{}, nil)
	if err != nil || len(b.Events) != 1 || b.Marks["opencode.db"].Size != -1 {
		t.Fatalf("first: %+v %v", b, err)
	}
	// The write that came after the read, its time put back to the one
	// the mark holds.
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Part("ses_1", "msg_1", "prt_b", t0+2000, skillPart("call_b", "kept", "completed", t0+1500))
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	b, err = New(ws, data).Import(ctx, time.Time{}, b.Marks)
	if err != nil || len(b.Events) != 1 || b.Events[0].ID != "call_b" {
		t.Fatalf("again: %+v %v", b, err)
	}
}

// TestImportLiveDatabase: a database in WAL mode that OpenCode has open
// (its -wal and -shm beside it, the calls not yet checkpointed) is read
// through the log; one whose log is gone is read immutable. Neither read
// creates a file.
func TestImportLiveDatabase(t *testing.T) {
	ctx := context.Background()
	ws, data, path, db := newDatabase(t, true)
	db.Session("p1", "ses_1", ws, t0)
	db.Message("ses_1", "msg_1", t0)
	db.Part("ses_1", "msg_1", "prt_b", t0+2000, skillPart("call_b", "notes", "completed", t0+1500))
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the writer keeps no log: %v", err)
	}
	before := names(t, data)
	// Written long enough ago that its mark is trusted (see racy).
	old := time.Now().Add(-10 * time.Second)
	if err := os.Chtimes(filepath.Join(data, "opencode.db"), old, old); err != nil {
		t.Fatal(err)
	}
	b, err := New(ws, data).Import(ctx, time.Time{}, nil)
	if err != nil || len(b.Events) != 1 || len(b.Unreadable) != 0 {
		t.Fatalf("live: %+v %v", b, err)
	}
	db.Part("ses_1", "msg_1", "prt_c", t0+3000, skillPart("call_c", "kept", "completed", t0+2500))
	b, err = New(ws, data).Import(ctx, time.Time{}, b.Marks)
	if err != nil || len(b.Events) != 1 || b.Events[0].ID != "call_c" {
		t.Fatalf("live, again: %+v %v", b, err)
	}
	if after := names(t, data); !slices.Equal(before, after) {
		t.Errorf("files: %v, were %v", after, before)
	}

	// OpenCode exits: the log is checkpointed and removed.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the log is still there")
	}
	before = names(t, data)
	b, err = New(ws, data).Import(ctx, time.Time{}, nil)
	if err != nil || len(b.Events) != 2 || len(b.Unreadable) != 0 {
		t.Fatalf("closed: %+v %v", b, err)
	}
	if after := names(t, data); !slices.Equal(before, after) {
		t.Errorf("files: %v, were %v", after, before)
	}
}

// TestImportSurvivesHostileDatabases: a file that is not SQLite, a
// corrupt database and one of another schema are each said, naming the
// file, and the other databases and the JSON storage are read; a part too
// large and one that does not parse are counted and skipped.
func TestImportSurvivesHostileDatabases(t *testing.T) {
	ctx := context.Background()
	ws := filepath.Join(t.TempDir(), "w")
	data := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(data, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("opencode.db", "not a database at all, but long enough to have a header of one hundred bytes.................")
	other := opencodetest.Create(t, filepath.Join(data, "opencode-dev.db"), false)
	other.Exec("CREATE TABLE notes (id text)")
	other.Exec("DROP TABLE part")
	good := opencodetest.Create(t, filepath.Join(data, "opencode-beta.db"), false)
	good.Session("p1", "ses_1", ws, t0)
	good.Message("ses_1", "msg_1", t0)
	good.Part("ses_1", "msg_1", "prt_a", t0+1000, `{"type":"tool",`)
	good.Part("ses_1", "msg_1", "prt_b", t0+2000, `{"type":"text","text":"`+strings.Repeat("x", maxRecord)+`"}`)
	good.Part("ses_1", "msg_1", "prt_c", t0+3000, skillPart("call_c", "notes", "completed", t0+2500))
	// A corrupt database: a real one whose pages past the header are
	// overwritten.
	corrupt := filepath.Join(data, "opencode-stable.db")
	c := opencodetest.Create(t, corrupt, false)
	c.Session("p1", "ses_2", ws, t0)
	c.Close()
	body, err := os.ReadFile(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	for i := 100; i < len(body); i++ {
		body[i] = 0xA5
	}
	write("opencode-stable.db", string(body))
	// The JSON storage beside them.
	st := filepath.Join(data, "storage")
	for p, body := range map[string]string{
		"session/p/ses_j.json":   `{"id":"ses_j","directory":"` + ws + `"}`,
		"message/ses_j/m.json":   `{}`,
		"part/m/prt_j.json":      `{"type":"tool","callID":"call_j","tool":"skill","state":{"status":"completed","input":{"name":"kept"},"time":{"start":1772359210000}}}`,
		"session/p/ses_x.json":   `{"id":`,
		"message/ses_x/m2.json":  `{}`,
		"part/m2/prt_x.json":     `{}`,
		"session/p/ses_y.json":   `{"id":"ses_y","directory":"/elsewhere"}`,
		"message/ses_y/m3.json":  `{}`,
		"part/m3/prt_y.json":     `{}`,
		"session/p/ses_z.json":   `{"id":"ses_z","directory":"` + ws + `"}`,
		"message/ses_z/m4.json":  `{}`,
		"part/m4/prt_z.json":     `{"type":"tool","callID":"call_c","tool":"skill","state":{"status":"completed","input":{"name":"notes"},"time":{"start":1772359202500}}}`,
		"message/ses_z/m5.json":  `{}`,
		"part/m5/prt_other.json": `{"type":"text"}`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(st, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(st, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	b, err := New(ws, data).Import(ctx, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range b.Events {
		ids = append(ids, ev.ID)
	}
	slices.Sort(ids)
	// call_c is both in the JSON storage and in opencode-beta.db: the
	// journal counts it once (see the root package's test).
	if want := []string{"call_c", "call_c", "call_j"}; !slices.Equal(ids, want) || b.TooLong != 1 || b.Malformed != 2 || len(b.MalformedAt) != 2 {
		t.Errorf("events %v, batch %+v", ids, b)
	}
	want := map[string]string{
		"opencode.db":        "not a SQLite database",
		"opencode-dev.db":    "not the schema of OpenCode's sessions",
		"opencode-stable.db": "malformed",
	}
	if len(b.Unreadable) != len(want) {
		t.Fatalf("unreadable: %q", b.Unreadable)
	}
	for _, msg := range b.Unreadable {
		ok := false
		for name, why := range want {
			ok = ok || strings.HasPrefix(msg, filepath.Join(data, name)+":") && strings.Contains(msg, why)
		}
		if !ok {
			t.Errorf("unreadable %q", msg)
		}
	}
	if _, ok := b.Marks["opencode.db"]; ok {
		t.Errorf("a mark for an unreadable database: %+v", b.Marks)
	}
	var _ agent.Importer = New(ws, data)
}

// TestImportDatabaseOfOpenCodeDB: $OPENCODE_DB names the database
// elsewhere (absolute) or in the data folder (relative); a name that is
// no file is passed over.
func TestImportDatabaseOfOpenCodeDB(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), "w")
	data, elsewhere := t.TempDir(), t.TempDir()
	path := filepath.Join(elsewhere, "oc.sqlite")
	db := opencodetest.Create(t, path, false)
	db.Session("p1", "ses_1", ws, t0)
	db.Message("ses_1", "msg_1", t0)
	db.Part("ses_1", "msg_1", "prt_b", t0+2000, skillPart("call_b", "notes", "completed", t0+1500))
	im := New(ws, data)
	im.Database = path
	b, err := im.Import(context.Background(), time.Time{}, nil)
	if _, ok := b.Marks[path]; err != nil || len(b.Events) != 1 || !ok {
		t.Errorf("absolute: %+v %v", b, err)
	}
	if err := os.Rename(path, filepath.Join(data, "oc.sqlite")); err != nil {
		t.Fatal(err)
	}
	im = New(ws, data)
	im.Database = "oc.sqlite"
	b, err = im.Import(context.Background(), time.Time{}, nil)
	if _, ok := b.Marks["oc.sqlite"]; err != nil || len(b.Events) != 1 || !ok {
		t.Errorf("relative: %+v %v", b, err)
	}
	im = New(ws, data)
	im.Database = "none.db"
	b, err = im.Import(context.Background(), time.Time{}, nil)
	if err != nil || len(b.Events) != 0 || len(b.Unreadable) != 0 {
		t.Errorf("missing: %+v %v", b, err)
	}
}

// Ids longer than any OpenCode writes are a hostile file's: such a session
// or part is not read, and the rest of the database still is.
func TestImportDatabaseSkipsHugeIDs(t *testing.T) {
	t.Parallel()
	ws, data, _, db := newDatabase(t, false)
	long := "ses_" + strings.Repeat("x", 100000)
	db.Session("p1", long, ws, t0)
	db.Session("p1", "ses_1", ws, t0)
	db.Message(long, "msg_0", t0)
	db.Message("ses_1", "msg_1", t0)
	db.Part(long, "msg_0", "prt_a", t0+1000, skillPart("call_a", "notes", "completed", t0+500))
	db.Part("ses_1", "msg_1", "prt_"+strings.Repeat("y", 100000), t0+2000, skillPart("call_b", "notes", "completed", t0+1500))
	db.Part("ses_1", "msg_1", "prt_c", t0+3000, skillPart("call_c", "notes", "completed", t0+2500))
	b, err := New(ws, data).Import(context.Background(), time.Time{}, nil)
	if err != nil || len(b.Events) != 1 {
		t.Fatalf("events %+v, %v: want call_c alone", b.Events, err)
	}
}

// TestImportDatabaseInBoundedReads: an import reads at most the row limit
// from one database; the next imports go on from where it stopped, though
// the file did not change, until every call is counted exactly once.
func TestImportDatabaseInBoundedReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, data, _, db := newDatabase(t, false)
	db.Session("p1", "ses_1", ws, t0)
	db.Session("p1", "ses_2", ws, t0)
	db.Message("ses_1", "msg_1", t0)
	db.Message("ses_2", "msg_2", t0)
	want := map[string]bool{}
	for i := range 25 {
		ses := "ses_" + itoa(int64(1+i%2))
		call := "call_" + itoa(int64(i))
		// Parts 10 to 12 share a millisecond across the first limit.
		at := t0 + int64(i)*1000
		if i >= 10 && i <= 12 {
			at = t0 + 9000
		}
		db.Part(ses, "msg_"+itoa(int64(1+i%2)), "prt_"+itoa(int64(i)), at, skillPart(call, "notes", "completed", at-100))
		want[call] = true
	}
	im := New(ws, data)
	im.maxRows = 10
	got := map[string]int{}
	var marks agent.Marks
	imports := 0
	for ; imports < 10; imports++ {
		b, err := im.Import(ctx, time.Time{}, marks)
		if err != nil || len(b.Unreadable) != 0 {
			t.Fatalf("import %d: %+v %v", imports, b, err)
		}
		if b.Files > 10 {
			t.Fatalf("import %d read %d parts, over the limit of 10", imports, b.Files)
		}
		if len(b.Events) == 0 {
			break
		}
		for _, ev := range b.Events {
			got[ev.ID]++
		}
		marks = b.Marks
	}
	if imports < 3 {
		t.Errorf("all read in %d imports: the limit did not hold", imports)
	}
	for call := range want {
		if got[call] == 0 {
			t.Errorf("%s never read", call)
		}
	}
	if len(got) != len(want) {
		t.Errorf("read %d calls, want %d: %v", len(got), len(want), got)
	}
}

// TestImportDatabaseAfterTheClockSteppedBack: OpenCode dates a part's
// time_updated by the machine's clock. A part written after the clock
// stepped back (an NTP correction, a VM restored from a snapshot) is older
// than the cursor the last import left, and is counted all the same, once;
// so is a call still running at that import that completed after the step.
func TestImportDatabaseAfterTheClockSteppedBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, data, path, db := newDatabase(t, false)
	db.Session("p1", "ses_1", ws, t0)
	db.Message("ses_1", "msg_1", t0)
	// The clock ran an hour fast: the last import's cursor is there.
	fast := time.Now().Add(-time.Minute).UnixMilli()
	db.Part("ses_1", "msg_1", "prt_a", fast, skillPart("call_a", "notes", "completed", fast-500))
	db.Part("ses_1", "msg_1", "prt_b", fast, skillPart("call_b", "notes", "running", fast-300))
	old := time.Now().Add(-10 * time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	im := New(ws, data)
	first, err := im.Import(ctx, time.Time{}, nil)
	if err != nil || len(first.Events) != 1 || first.Events[0].ID != "call_a" {
		t.Fatalf("first import: %+v %v", first, err)
	}
	// Stepped back by an hour: OpenCode writes a new call, and completes
	// the running one, at times before the cursor.
	back := fast - time.Hour.Milliseconds()
	db.Part("ses_1", "msg_1", "prt_c", back, skillPart("call_c", "notes", "completed", back-200))
	db.Part("ses_1", "msg_1", "prt_b", back+100, skillPart("call_b", "notes", "completed", fast-300))
	if err := os.Chtimes(path, old.Add(time.Second), old.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	second, err := im.Import(ctx, time.Time{}, first.Marks)
	if err != nil {
		t.Fatal(err)
	}
	// call_a is read again (the running call held the cursor before it);
	// the import's set of calls seen counts it once.
	var got []string
	for _, ev := range second.Events {
		if ev.ID != "call_a" {
			got = append(got, ev.ID)
		}
	}
	slices.Sort(got)
	if want := []string{"call_b", "call_c"}; !slices.Equal(got, want) {
		t.Fatalf("after the clock stepped back: calls %v, want %v", got, want)
	}
	third, err := im.Import(ctx, time.Time{}, second.Marks)
	if err != nil || len(third.Events) != 0 {
		t.Fatalf("third import: %+v %v", third, err)
	}
}

// TestImportDatabaseInBoundedReadsAfterARowCursor: once an import has
// left a rowid cursor, imports bounded by the row limit go on past the
// new rows rather than read the oldest of them again each time.
func TestImportDatabaseInBoundedReadsAfterARowCursor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, data, path, db := newDatabase(t, false)
	db.Session("p1", "ses_1", ws, t0)
	db.Message("ses_1", "msg_1", t0)
	db.Part("ses_1", "msg_1", "prt_first", t0, skillPart("call_first", "notes", "completed", t0-100))
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	im := New(ws, data)
	im.maxRows = 10
	first, err := im.Import(ctx, time.Time{}, nil)
	if err != nil || len(first.Events) != 1 || first.Marks["opencode.db"].Row == 0 {
		t.Fatalf("first import: %+v %v", first, err)
	}
	want := map[string]bool{}
	for i := range 25 {
		at := t0 + int64(i+1)*1000
		call := "call_" + itoa(int64(i))
		db.Part("ses_1", "msg_1", "prt_"+itoa(int64(i)), at, skillPart(call, "notes", "completed", at-100))
		want[call] = true
	}
	if err := os.Chtimes(path, old.Add(time.Second), old.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	marks := first.Marks
	for imports := 0; imports < 10; imports++ {
		b, err := im.Import(ctx, time.Time{}, marks)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Events) == 0 {
			break
		}
		for _, ev := range b.Events {
			got[ev.ID]++
		}
		marks = b.Marks
	}
	for call := range want {
		if got[call] == 0 {
			t.Errorf("%s never read", call)
		}
	}
}
