package materialize

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/flock"
	"github.com/skillsync/skillsync/workspace"
)

// sameFolderIn finds the record's folder that is the same directory under
// a name differing only in case (as a case-folding file system shows it;
// here a link stands in for that second name), and nothing else.
func TestSameFolderIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, d := range []string{"Foo", "Bar", "other"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("Foo", filepath.Join(dir, "foo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(dir, "bar")); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{"Foo": "skill Foo", "Bar": "skill Bar", "other": "skill other"}
	if got, ok := sameFolderIn(dir, "foo", m); !ok || got != "skill Foo" {
		t.Errorf("foo: %q %v, want the record's Foo", got, ok)
	}
	if got, ok := sameFolderIn(dir, "bar", m); ok {
		t.Errorf("bar (another directory, same name but for case): %q", got)
	}
	if got, ok := sameFolderIn(dir, "Foo", m); ok {
		t.Errorf("Foo itself: %q", got)
	}
	if got, ok := sameFolderIn(dir, "missing", m); ok {
		t.Errorf("missing: %q", got)
	}
}

// In symlink mode a skill with no directory of its own is copied: its
// build reads staging for the first time after the link of the skill
// before it was staged there, and must not take that link for a
// leftover of an earlier run.
func TestAStagedLinkOutlivesTheFirstLookAtStaging(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	linkTo := t.TempDir()
	skills := []TargetSkill{{Skill: mkSkill("a", v1), Dir: linkTo}, {Skill: mkSkill("b", v1)}}
	rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Symlink, Skills: skills})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("SyncTarget = %+v, %v", rep, err)
	}
	if got, err := os.Readlink(filepath.Join(dir, "a")); err != nil || got != linkTo {
		t.Errorf("a: link %q, %v", got, err)
	}
	if got := readFile(t, filepath.Join(dir, "b", "SKILL.md")); got != v1["SKILL.md"] {
		t.Errorf("b: SKILL.md holds %q", got)
	}
}

// TestClaimTarget: a target's record names the workspace that keeps it;
// another workspace with its cache is refused, one reached by another
// path is the same, one without a cache is taken over.
func TestClaimTarget(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "target")
	ws, other, gone := filepath.Join(root, "ws"), filepath.Join(root, "other"), filepath.Join(root, "gone")
	for _, d := range []string{dir, ws, filepath.Join(other, workspace.CacheName), gone} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ws, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ws, recorded, keeper string
		warns, taken               bool
	}{
		{name: "no workspace given", recorded: "../other", keeper: "../other"},
		{name: "a record without one", ws: ws, keeper: "../ws"},
		{name: "its own", ws: ws, recorded: "../ws", keeper: "../ws"},
		{name: "its own by a link", ws: ws, recorded: "../link", keeper: "../ws"},
		{name: "its own, absolute", ws: ws, recorded: filepath.ToSlash(ws), keeper: "../ws"},
		{name: "another's", ws: ws, recorded: "../other", taken: true},
		{name: "another's, absolute", ws: ws, recorded: filepath.ToSlash(other), taken: true},
		{name: "one gone", ws: ws, recorded: "../gone", keeper: "../ws", warns: true},
		{name: "one never there", ws: ws, recorded: "../../nowhere", keeper: "../ws", warns: true},
	} {
		keeper, warning, err := claimTarget(dir, tc.ws, tc.recorded)
		if errors.Is(err, ErrTargetTaken) != tc.taken || (err != nil) != tc.taken {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if !tc.taken && (keeper != tc.keeper || (warning != "") != tc.warns) {
			t.Errorf("%s: keeper %q, warning %q; want %q, a warning %v", tc.name, keeper, warning, tc.keeper, tc.warns)
		}
	}
}

// TestGiveUpCorruptRecord: a dropped target whose record is corrupt is
// given up at once: the record set aside, its entries left to the user,
// rather than a warning at every sync.
func TestGiveUpCorruptRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RecordName), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, done, err := GiveUpTarget(context.Background(), dir, t.TempDir(), time.Second)
	if err != nil || !done || len(rep.Warnings) != 1 {
		t.Fatalf("given up: %v, warnings %q, error %v", done, rep.Warnings, err)
	}
	if _, err := os.Stat(filepath.Join(dir, RecordName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the corrupt record is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "alpha")); err != nil {
		t.Errorf("an entry of the corrupt record: %v", err)
	}
}

// TestGiveUpNotThroughALink: a dropped target named through a link in
// place of its folder (a planted list) is refused, its copies kept.
func TestGiveUpNotThroughALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, ws := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, "target")
	skills := []TargetSkill{{Skill: mkSkill("alpha", map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"})}}
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if _, done, err := GiveUpTarget(ctx, link, ws, time.Second); err == nil || done {
		t.Errorf("given up through a link: %v, %v", done, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "alpha", "SKILL.md")); err != nil {
		t.Errorf("the copy: %v", err)
	}
}

// TestTargetLockWaitsAsAsked: a target another sync is changing is
// waited for as long as the sync was told (--wait), then refused with
// what to do, nothing written.
func TestTargetLockWaitsAsAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	held, err := flock.AcquireDir(context.Background(), dir, targetLock, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	skills := []TargetSkill{{Skill: mkSkill("alpha", map[string]string{"SKILL.md": "---\nname: alpha\ndescription: A.\n---\n"})}}
	start := time.Now()
	_, err = SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy, Skills: skills, Wait: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "another sync is changing it") || !strings.Contains(err.Error(), "--wait") {
		t.Errorf("a held target: %v", err)
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Errorf("waited %s for a wait of 200ms", waited)
	}
	if _, err := os.Stat(filepath.Join(dir, "alpha")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was written while the target was held: %v", err)
	}
}

// cancelFS stops the sync it is read by as its first file is opened: a
// SIGTERM that comes while a target's skills are being staged.
type cancelFS struct {
	fs.FS
	cancel context.CancelFunc
}

func (c cancelFS) Open(name string) (fs.File, error) {
	c.cancel()
	return c.FS.Open(name)
}

// TestTargetStoppedWhileStagingFails: a stop while a target's skills are
// staged fails every skill not yet staged; the target must then fail
// with the stop, and stay as it was. It wrote a record without those
// skills and passed: a daemon sent SIGTERM counted the sync a success,
// status said all well, and a new target was left empty.
func TestTargetStoppedWhileStagingFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := func(n string) map[string]string {
		return map[string]string{"SKILL.md": "---\nname: x\ndescription: d\n---\n" + n + "\n", "notes.md": n + "\n"}
	}
	var first []TargetSkill
	for _, name := range []string{"a", "b", "c"} {
		first = append(first, TargetSkill{Skill: mkSkill(name, v("one"))})
	}
	if rep, err := SyncTarget(context.Background(), Target{Dir: dir, Skills: first}); err != nil || len(rep.Errors) > 0 {
		t.Fatalf("the first sync: %+v, %v", rep, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var next []TargetSkill
	for _, name := range []string{"a", "b", "c"} {
		s := mkSkill(name, v("two"))
		if name == "a" {
			s.Files = cancelFS{s.Files, cancel}
		}
		next = append(next, TargetSkill{Skill: s})
	}
	if _, err := SyncTarget(ctx, Target{Dir: dir, Skills: next}); !errors.Is(err, context.Canceled) {
		t.Errorf("a sync stopped while staging: %v, want the stop", err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if got, err := os.ReadFile(filepath.Join(dir, name, "notes.md")); err != nil || string(got) != "one\n" {
			t.Errorf("%s after the stop: %q, %v; want it as the last sync left it", name, got, err)
		}
	}
	rec, err := LoadTargetRecord(dir)
	if err != nil || len(rec.Skills) != 3 {
		t.Errorf("the record after the stop: %+v, %v", rec, err)
	}
}

// TestLinkInPlaceOfTheTarget: a symbolic link where the target folder
// goes (planted after any check of its path) is refused by SyncTarget and
// GiveUpTarget with ErrTargetLinked, a refusal (IsRefused) the caller
// takes for that target alone, and nothing is written or removed where
// it points.
func TestLinkInPlaceOfTheTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, RecordName), []byte(`{"version":2,"skills":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "skills")
	if err := os.Symlink(outside, dir); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	_, err := SyncTarget(ctx, Target{Dir: dir, Skills: []TargetSkill{{Skill: mkSkill("a", v1)}}, Workspace: root})
	if !errors.Is(err, ErrTargetLinked) || !IsRefused(err) || !strings.Contains(err.Error(), "target "+dir) {
		t.Errorf("SyncTarget through a link: %v, want ErrTargetLinked naming the target", err)
	}
	if _, done, err := GiveUpTarget(ctx, dir, root, 0); done || !errors.Is(err, ErrTargetLinked) {
		t.Errorf("GiveUpTarget through a link: %v %v, want ErrTargetLinked", done, err)
	}
	if entries, err := os.ReadDir(outside); err != nil || len(entries) != 1 {
		t.Errorf("written or removed through the link: %v %v", entries, err)
	}
	if err := CheckTargetPlace(filepath.Join(root, workspace.CacheName, "x")); !errors.Is(err, ErrTargetPlace) || !IsRefused(err) {
		t.Errorf("a target in a cache: %v, want ErrTargetPlace", err)
	}
	for _, dir := range []string{filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".GIT"), filepath.Join(root, "sub", "git~1", "x")} {
		if err := CheckTargetPlace(dir); !errors.Is(err, ErrTargetPlace) {
			t.Errorf("a target in a repository's own folder %s: %v, want ErrTargetPlace", dir, err)
		}
	}
	if err := CheckTargetPlace(filepath.Join(root, ".github", "skills")); err != nil {
		t.Errorf("a target in .github: %v, want none", err)
	}
	if IsRefused(errors.New("disk full")) {
		t.Error("any error is a refusal")
	}
}
