package materialize

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// noExchange is a system without a one-step exchange, as Windows is.
func noExchange(a, b string) error {
	return &os.LinkError{Op: "exchange", Old: a, New: b, Err: platform.ErrNoExchange}
}

// exchangeDirs makes a destination root with staging, a live skill
// holding "old" and a staged one holding "new".
func exchangeDirs(t *testing.T) (root, staged, live string) {
	t.Helper()
	root = t.TempDir()
	staged = filepath.Join(root, stagingName, "b1")
	live = filepath.Join(root, "src", "pdf")
	for dir, content := range map[string]string{staged: "new", live: "old"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, staged, live
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestTwoRenameExchange forces the exchange Windows makes (two renames
// under a journal) on this system.
func TestTwoRenameExchange(t *testing.T) {
	t.Parallel()
	_, staged, live := exchangeDirs(t)
	old, err := destAt(t, filepath.Dir(filepath.Dir(staged))).exchangeWith(noExchange, staged, live)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(live, "SKILL.md")); got != "new" {
		t.Errorf("live holds %q after the exchange", got)
	}
	if old == "" || readFile(t, filepath.Join(old, "SKILL.md")) != "old" {
		t.Errorf("the old version is not at %q", old)
	}
	if got := entries(t, filepath.Dir(staged)); len(got) != 1 || got[0] != "b1.old" {
		t.Errorf("staging holds %v, want only the old version (no journal)", got)
	}

	// A live entry that is not there yet: staged simply moves in.
	_, staged, live = exchangeDirs(t)
	if err := os.RemoveAll(live); err != nil {
		t.Fatal(err)
	}
	if old, err := destAt(t, filepath.Dir(filepath.Dir(staged))).exchangeWith(noExchange, staged, live); err != nil || old != "" {
		t.Fatalf("exchange into nothing = %q, %v", old, err)
	}
	if readFile(t, filepath.Join(live, "SKILL.md")) != "new" {
		t.Error("the staged version did not move in")
	}

	// A second rename that fails puts the old version back.
	_, staged, live = exchangeDirs(t)
	if err := os.RemoveAll(staged); err != nil {
		t.Fatal(err)
	}
	if _, err := destAt(t, filepath.Dir(filepath.Dir(staged))).exchangeWith(noExchange, staged, live); err == nil {
		t.Fatal("exchanging in a missing staged directory succeeded")
	}
	if readFile(t, filepath.Join(live, "SKILL.md")) != "old" {
		t.Error("a failed exchange left live without its old version")
	}
	if got := entries(t, filepath.Dir(staged)); len(got) != 0 {
		t.Errorf("a failed exchange left %v in staging", got)
	}
}

// TestExchangeRecovery stops a two-rename exchange between its renames,
// as a crash would, and has the next run apply the recovery rule: the
// old version goes back, and a sync then works as usual.
func TestExchangeRecovery(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("pdf", map[string]string{"SKILL.md": "v1", "ref.md": "ref"}))
	live := filepath.Join(root, "src", "pdf")
	staged := filepath.Join(root, stagingName, "crashed")
	if err := os.MkdirAll(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staged, "SKILL.md"), []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Every exchange is made under the marker (commit writes it first).
	if err := os.WriteFile(filepath.Join(root, dirtyName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old, journal, err := destAt(t, filepath.Dir(filepath.Dir(staged))).beginExchange(staged, live)
	if err != nil || old == "" {
		t.Fatalf("beginExchange = %q, %v", old, err)
	}
	if _, err := os.Lstat(live); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("live is still there between the renames: %v", err)
	}
	// The crash: nothing more of this run happens. The next opens the
	// cache.
	c := open(t, root)
	if got := readFile(t, filepath.Join(live, "SKILL.md")); got != "v1" {
		t.Errorf("after recovery live holds %q, want the old version", got)
	}
	if _, err := os.Lstat(journal); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the journal is still there: %v", err)
	}
	if d := verifyCache(t, root); len(d) != 0 {
		c.Close()
		t.Fatalf("the recovered cache differs from its record: %v", d)
	}
	c.Close()
	syncOnce(t, root, "r2", mkSkill("pdf", map[string]string{"SKILL.md": "v3", "ref.md": "ref"}))
	if got := readFile(t, filepath.Join(live, "SKILL.md")); got != "v3" {
		t.Errorf("the sync after recovery wrote %q", got)
	}
}

// TestExchangeRecoveryAfterTheSecondRename: a crash after both renames
// and before the journal went leaves the new version live; recovery only
// drops the journal.
func TestExchangeRecoveryAfterTheSecondRename(t *testing.T) {
	t.Parallel()
	root, staged, live := exchangeDirs(t)
	old, journal, err := destAt(t, filepath.Dir(filepath.Dir(staged))).beginExchange(staged, live)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staged, live); err != nil {
		t.Fatal(err)
	}
	restored, err := recoverExchanges(destAt(t, root), filepath.Join(root, stagingName))
	if err != nil || len(restored) != 0 {
		t.Fatalf("recover = %v, %v; want nothing put back", restored, err)
	}
	if readFile(t, filepath.Join(live, "SKILL.md")) != "new" || readFile(t, filepath.Join(old, "SKILL.md")) != "old" {
		t.Error("recovery moved a finished exchange")
	}
	if _, err := os.Lstat(journal); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the journal is still there: %v", err)
	}
}

// TestExchangeJournalIsUntrusted plants journals in staging: none may
// move anything outside the destination or through a link, and each is
// removed.
func TestExchangeJournalIsUntrusted(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	staging := filepath.Join(root, stagingName)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	journals := map[string]string{
		"up":      `{"live":"../escaped"}`,
		"abs":     `{"live":"` + filepath.Join(outside, "abs") + `"}`,
		"deep":    `{"live":"src/a/b"}`,
		"dot":     `{"live":"src/.hidden"}`,
		"link":    `{"live":"linked/pdf"}`,
		"garbage": `not json`,
		"empty":   `{"live":""}`,
	}
	for name, content := range journals {
		old := filepath.Join(staging, name+oldSuffix)
		if err := os.MkdirAll(old, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(staging, name+journalSuffix), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A journal that is a link to a file elsewhere is not read.
	secret := filepath.Join(outside, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"live":"src/pdf"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(staging, "viaLink"+oldSuffix), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(staging, "viaLink"+journalSuffix)); err != nil {
		t.Fatal(err)
	}
	restored, err := recoverExchanges(destAt(t, filepath.Dir(staging)), staging)
	if err != nil || len(restored) != 0 {
		t.Fatalf("recover = %v, %v; want nothing put back", restored, err)
	}
	if got := entries(t, outside); len(got) != 1 || got[0] != "secret.json" {
		t.Errorf("something was moved outside the destination: %v", got)
	}
	if got := entries(t, filepath.Join(root, "src")); len(got) != 0 {
		t.Errorf("something was moved into the destination: %v", got)
	}
	for _, name := range entries(t, staging) {
		if filepath.Ext(name) == journalSuffix {
			t.Errorf("journal %s was kept", name)
		}
	}
}

// A journal in the staging of a marked cache without the marker (no
// build that marks the manifest leaves one so; a manifest marked by hand,
// say), the live entry missing. A sync that builds finds it when it reads
// staging: it neither recycles the old version nor puts it back under its
// own changes, and leaves the marker, so the run after it recovers it.
func TestAJournalWithoutTheMarkerIsRecoveredByTheNextRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	pdf := map[string]string{"SKILL.md": "v1", "ref.md": "ref"}
	syncOnce(t, root, "r1", mkSkill("pdf", pdf), mkSkill("doc", map[string]string{"SKILL.md": "d1"}))
	live := filepath.Join(root, "src", "pdf")
	staged := filepath.Join(root, stagingName, "crashed")
	if err := os.MkdirAll(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	old, journal, err := destAt(t, filepath.Dir(filepath.Dir(staged))).beginExchange(staged, live)
	if err != nil || old == "" {
		t.Fatalf("beginExchange = %q, %v", old, err)
	}
	syncOnce(t, root, "r2", mkSkill("pdf", pdf), mkSkill("doc", map[string]string{"SKILL.md": "d2"}))
	for _, p := range []string{journal, old, filepath.Join(root, dirtyName)} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("after the sync that read staging: %v", err)
		}
	}
	c := open(t, root)
	if got := readFile(t, filepath.Join(live, "SKILL.md")); got != "v1" {
		t.Errorf("after recovery live holds %q, want the old version", got)
	}
	c.Close()
	if d := verifyCache(t, root); len(d) != 0 {
		t.Fatalf("the recovered cache differs from its record: %v", d)
	}
}

// A swap that fails and leaves a two-rename exchange's journal keeps the
// marker: the next run recovers and checks. One that fails otherwise
// left its live entry as it was, and the marker goes as usual.
func TestAFailedSwapKeepsTheMarkerWhereItLeftAJournal(t *testing.T) {
	t.Parallel()
	for _, journal := range []bool{true, false} {
		root, staged, live := exchangeDirs(t)
		marker := filepath.Join(root, dirtyName)
		w, err := newWriter(filepath.Join(root, stagingName), marker, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(staged); err != nil { // the swap cannot be made
			t.Fatal(err)
		}
		if journal {
			// As a second rename that failed, and its put-back too, leave it.
			if err := os.WriteFile(staged+journalSuffix, []byte(`{"live":"src/pdf"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		w.queue(&swap{staged: staged, live: live})
		failed, err := w.commit(context.Background())
		if err != nil || failed == nil {
			t.Fatalf("commit = %v, %v; want the swap failed", failed, err)
		}
		if err := w.clean(); err != nil {
			t.Fatal(err)
		}
		w.tidy()
		_, err = os.Lstat(marker)
		if kept := err == nil; kept != journal {
			t.Errorf("journal left %v: marker kept %v", journal, kept)
		}
	}
}

// A folder named like a journal is no journal (recoverExchanges passes
// it by): a sync that reads staging does not keep the marker for it,
// which would make every later sync one that checks every file.
func TestAFolderNamedLikeAJournalLeavesNoMarker(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	syncOnce(t, root, "r1", mkSkill("doc", map[string]string{"SKILL.md": "d1"}))
	if err := os.MkdirAll(filepath.Join(root, stagingName, "x"+journalSuffix), 0o755); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, root, "r2", mkSkill("doc", map[string]string{"SKILL.md": "d2", "new.md": "n"}))
	if _, err := os.Lstat(filepath.Join(root, dirtyName)); err == nil {
		t.Error("the marker stayed for a folder named like a journal")
	}
}

// A cache an older build wrote (its manifest without exchanges_marked)
// may hold a journal that build left without the marker: it is
// recovered when the cache is opened, before anything looks at it, and
// the next commit marks the manifest.
func TestAnOlderBuildsJournalIsRecoveredAtOpen(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	pdf := map[string]string{"SKILL.md": "v1", "ref.md": "ref"}
	syncOnce(t, root, "r1", mkSkill("pdf", pdf))
	name := filepath.Join(root, manifestName)
	var index map[string]any
	if err := json.Unmarshal([]byte(readFile(t, name)), &index); err != nil || index["exchanges_marked"] != true {
		t.Fatalf("the manifest is not marked: %v %v", index["exchanges_marked"], err)
	}
	delete(index, "exchanges_marked")
	data, err := json.Marshal(index)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(root, "src", "pdf")
	staged := filepath.Join(root, stagingName, "crashed")
	if err := os.MkdirAll(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	if old, _, err := destAt(t, filepath.Dir(filepath.Dir(staged))).beginExchange(staged, live); err != nil || old == "" {
		t.Fatalf("beginExchange = %q, %v", old, err)
	}
	// Opening the cache puts it back, before any sync looks, and that
	// run trusts no record: what it put back is checked.
	c := open(t, root)
	if !c.writer.unclean {
		t.Error("the run that put an exchange back trusts the records")
	}
	c.Close()
	if got := readFile(t, filepath.Join(live, "SKILL.md")); got != "v1" {
		t.Errorf("after the open live holds %q, want the old version", got)
	}
	// A sync with nothing new (its source current, not looked at) marks
	// the manifest: the next open need not read staging.
	c = open(t, root)
	if !c.Current(Source{Name: "src", Revision: "r1"}) {
		t.Fatal("the source is not current")
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := json.Unmarshal([]byte(readFile(t, name)), &index); err != nil || index["exchanges_marked"] != true {
		t.Errorf("the sync did not mark the manifest: %v %v", index["exchanges_marked"], err)
	}
	if d := verifyCache(t, root); len(d) != 0 {
		t.Fatalf("the recovered cache differs from its record: %v", d)
	}
}

// afterFailure keeps the marker where a failed swap may have left its
// live entry other than it was, and only there.
func TestAfterAFailedSwapTheMarkerStaysWhereLiveMayHaveChanged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		s       swap
		journal bool
		keep    bool
	}{
		{"failed at its first step", swap{}, false, false},
		{"an undo failed too", swap{changed: true}, false, true},
		{"a patch whose undo failed", swap{patch: true, changed: true}, false, true},
		{"a two-rename journal left", swap{}, true, true},
		{"a patch leaves no journal", swap{patch: true}, true, false},
	}
	for _, c := range cases {
		dir := t.TempDir()
		s := c.s
		s.staged, s.live = filepath.Join(dir, "staged"), filepath.Join(dir, "live")
		if c.journal {
			if err := os.WriteFile(s.staged+journalSuffix, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		w := &writer{}
		w.afterFailure(&s)
		if w.keepMarker != c.keep {
			t.Errorf("%s: marker kept %v, want %v", c.name, w.keepMarker, c.keep)
		}
	}
}

// What a run moves into staging (a skill gone from its source) is not
// taken for an earlier run's leftover by a later build's first look, even
// where it counts as settled at once (settle 0 here; on Windows a rename
// keeps the folder's time): a reader that opened it still sees it whole.
func TestAFolderMovedOutIsNotRecycledByTheSameRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	run := func(r string, a, b []Skill) {
		t.Helper()
		c, err := openCache(context.Background(), root, time.Second, CheckRecord, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, src := range []Source{{Name: "a", Revision: r, Skills: a}, {Name: "b", Revision: r, Skills: b}} {
			if res := c.SyncSource(context.Background(), src); len(res.Errors) > 0 {
				t.Fatal(res.Errors)
			}
		}
		if err := c.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	x := map[string]string{"SKILL.md": "gone soon", "ref.md": "x's notes"}
	run("r1", []Skill{mkSkill("x", x)}, []Skill{mkSkill("y", map[string]string{"SKILL.md": "y1"})})
	run("r2", nil, []Skill{mkSkill("y", map[string]string{"SKILL.md": "y2", "new.md": "n"})})
	whole := false
	for _, name := range entries(t, filepath.Join(root, stagingName)) {
		dir := filepath.Join(root, stagingName, name)
		a, aerr := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		b, berr := os.ReadFile(filepath.Join(dir, "ref.md"))
		whole = whole || (aerr == nil && berr == nil && string(a) == x["SKILL.md"] && string(b) == x["ref.md"])
	}
	if !whole {
		t.Error("x's folder, moved out by the run, was built in by the same run")
	}
}

// A link a symlink-mode target stages is not taken for an earlier run's
// leftover by a later build's first look at staging.
func TestAStagedLinkIsNotALeftover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := newWriter(filepath.Join(dir, "staging"), filepath.Join(dir, "marker"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.stageLink(filepath.Join(dir, "a"), t.TempDir(), func() (string, error) { return "", nil }, nil); err != nil {
		t.Fatal(err)
	}
	w.take()
	w.tidy()
	if got := entries(t, filepath.Join(dir, "staging")); len(got) != 1 {
		t.Errorf("staging holds %v, want the staged link", got)
	}
}

// A target in symlink mode exchanges links. One stopped between its two
// renames leaves the old link in staging: recovery puts the link itself
// back, rather than failing every later run of the target.
func TestExchangeRecoveryPutsALinkBack(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	staging := filepath.Join(root, ".skillsync-staging")
	if err := os.MkdirAll(staging, 0o755); err != nil {
		t.Fatal(err)
	}
	winner := t.TempDir()
	live := filepath.Join(root, "pdf")
	if err := os.Symlink(winner, live); err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(staging, "l1")
	if err := os.Symlink(t.TempDir(), staged); err != nil {
		t.Fatal(err)
	}
	if old, _, err := destAt(t, filepath.Dir(filepath.Dir(staged))).beginExchange(staged, live); err != nil || old == "" {
		t.Fatalf("beginExchange = %q, %v", old, err)
	}
	restored, err := recoverExchanges(destAt(t, filepath.Dir(staging)), staging)
	if err != nil || len(restored) != 1 {
		t.Fatalf("recover = %v, %v; want the link put back", restored, err)
	}
	if got, err := os.Readlink(live); err != nil || got != winner {
		t.Errorf("live is %q, %v; want the old link to %s", got, err, winner)
	}
}

// destAt is the destination root held open, as a writer holds it: the
// exchanges of these tests go through its tree.
func destAt(t *testing.T, root string) dest {
	t.Helper()
	tree, err := platform.OpenTree(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return dest{tree}
}
