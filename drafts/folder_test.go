package drafts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/workspace"
)

// now is the clock of every test: proposals are made at it.
var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// newDrafts returns the drafts of a fresh workspace and its layout.
func newDrafts(t *testing.T) (*Folder, workspace.Layout) {
	t.Helper()
	l := workspace.New(t.TempDir(), "")
	return NewFolder(l, 1024), l
}

// writeSkill writes a valid SKILL.md for name into dir, the skill's own
// folder, which need not be named after it.
func writeSkill(t *testing.T, dir, name string) {
	t.Helper()
	skilltest.WriteFile(t, filepath.Join(dir, "SKILL.md"), skilltest.SkillMD(name, "The "+name+" skill."))
}

func rules(d Draft) []string {
	var out []string
	for _, p := range d.Problems {
		out = append(out, p.Rule)
	}
	return out
}

func TestProposeDirCopiesTheSkill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, l := newDrafts(t)
	src := skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", map[string]string{"scripts/run.sh": "#!/bin/sh\n", "ref.md": "notes\n"})
	if err := os.Chmod(filepath.Join(src, "scripts/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A link to a file inside the skill is copied as that file.
	if err := os.Symlink("ref.md", filepath.Join(src, "alias.md")); err != nil {
		t.Fatal(err)
	}
	dr, err := d.ProposeDir(ctx, src, "pdf", now)
	if err != nil {
		t.Fatal(err)
	}
	if !dr.Valid || dr.Hash == "" || dr.Dir != filepath.Join(l.DraftsDir(), "pdf") || !dr.Created.Equal(now) {
		t.Fatalf("draft = %+v", dr)
	}
	info, err := os.Lstat(filepath.Join(dr.Dir, "alias.md"))
	if err != nil || !info.Mode().IsRegular() {
		t.Errorf("alias.md in the draft = %v, %v; want a regular file", info, err)
	}
	if info, err := os.Stat(filepath.Join(dr.Dir, "scripts/run.sh")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("run.sh lost its executable bit: %v, %v", info, err)
	}
	if _, err := d.ProposeDir(ctx, src, "pdf", now); !errors.Is(err, ErrExists) {
		t.Errorf("a second proposal of pdf = %v, want ErrExists", err)
	}
	// Names compare without case: PDF is pdf's draft too.
	if _, err := d.ProposeDir(ctx, src, "PDF", now); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), filepath.Join(d.dir, "pdf")) {
		t.Errorf("a proposal of PDF beside pdf = %v, want ErrExists naming pdf's draft", err)
	}
	list, err := d.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "pdf" {
		t.Errorf("list = %+v, %v", list, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(l.DraftsDir(), ".incoming-*")); len(leftovers) > 0 {
		t.Errorf("staging left behind: %v", leftovers)
	}
}

// TestProposeRefusesHostileSkills: a link out of the skill, a FIFO and a
// file over max_file_size each refuse the whole proposal, and nothing is
// left in the drafts.
func TestProposeRefusesHostileSkills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		plant func(t *testing.T, dir string)
		want  string
	}{
		{"symlink out", func(t *testing.T, dir string) {
			if err := os.Symlink(secret, filepath.Join(dir, "leak.txt")); err != nil {
				t.Fatal(err)
			}
		}, "points outside the skill directory"},
		{"symlink to a directory", func(t *testing.T, dir string) {
			if err := os.Symlink(".", filepath.Join(dir, "loop")); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link to a directory"},
		{"fifo", func(t *testing.T, dir string) {
			if err := platform.Mkfifo(filepath.Join(dir, "pipe")); err != nil {
				t.Skip(err)
			}
		}, "pipe is a FIFO"},
		{"too large", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 1025), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "big.bin is 1025 bytes, over max_file_size 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, l := newDrafts(t)
			src := skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", nil)
			tt.plant(t, src)
			_, err := d.ProposeDir(ctx, src, "pdf", now)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("propose = %v, want %q", err, tt.want)
			}
			entries, _ := os.ReadDir(l.DraftsDir())
			for _, e := range entries {
				if e.Name() != workspace.DraftLocksName {
					t.Errorf("left in the drafts: %s", e.Name())
				}
			}
		})
	}
}

// TestInspectFindsHostileDrafts: a draft written straight into the folder
// (by an agent) with a link out, a FIFO or an oversized file is listed
// with the problem and is not valid. Reading it never blocks on the FIFO.
func TestInspectFindsHostileDrafts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, l := newDrafts(t)
	dir := filepath.Join(l.DraftsDir(), "evil")
	writeSkill(t, dir, "evil")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "leak")); err != nil {
		t.Fatal(err)
	}
	if err := platform.Mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2000), 0o644); err != nil {
		t.Fatal(err)
	}
	// A name the catalog refuses (it would reach every terminal that
	// lists the skill) is the gate's problem too.
	if err := os.WriteFile(filepath.Join(dir, "red\x1b[31m"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file git takes for a repository's folder, in any case.
	if err := os.WriteFile(filepath.Join(dir, ".Git"), []byte("gitdir: /tmp/r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dr, err := d.Inspect(ctx, "evil")
	if err != nil {
		t.Fatal(err)
	}
	got := rules(dr)
	for _, want := range []string{"draft-symlink", "file-not-regular", "file-too-large", "file-name-control-char", "draft-git"} {
		if !slices.Contains(got, want) {
			t.Errorf("problems %v lack %s", got, want)
		}
	}
	if dr.Valid {
		t.Error("a hostile draft is valid")
	}
	for _, p := range dr.Problems {
		if p.Source != ProblemSource || !strings.HasPrefix(p.File, "evil") {
			t.Errorf("problem %v does not say where", p)
		}
	}
}

// TestInspectStopsAtItsBounds: a draft of more entries than MaxEntries is
// refused as too large, and nothing past the bound is read: not even the
// catalog's check of file names walks on to a name it would refuse.
func TestInspectStopsAtItsBounds(t *testing.T) {
	t.Parallel()
	d, l := newDrafts(t)
	dir := filepath.Join(l.DraftsDir(), "huge")
	writeSkill(t, dir, "huge")
	for i := range MaxEntries + 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "zz\x1b[31m"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dr, err := d.Inspect(context.Background(), "huge")
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(dr); !slices.Contains(got, "draft-too-large") || slices.Contains(got, "file-name-control-char") || dr.Valid {
		t.Errorf("a draft past MaxEntries: problems %v, valid %v", got, dr.Valid)
	}
}

// TestInspectIsStrict: a warning of the Agent Skills rules is a problem
// that stops the promotion.
func TestInspectIsStrict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, l := newDrafts(t)
	writeSkill(t, filepath.Join(l.DraftsDir(), "Odd"), "Odd")
	dr, err := d.Inspect(ctx, "Odd")
	if err != nil {
		t.Fatal(err)
	}
	if dr.Valid || !slices.Contains(rules(dr), "name-not-lowercase") {
		t.Errorf("draft = %+v", dr)
	}
	if _, err := d.Inspect(ctx, "missing"); !errors.Is(err, ErrNoDraft) {
		t.Errorf("inspect missing = %v", err)
	}
}

func TestProposeFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, _ := newDrafts(t)
	md := "---\nname: notes\ndescription: Take notes.\nmetadata:\n  author: agent-7\n---\n# Notes\n"
	dr, err := d.ProposeFiles(ctx, "notes", map[string][]byte{"SKILL.md": []byte(md), "scripts/x.sh": []byte("#!/bin/sh\n")}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !dr.Valid || dr.Author != "agent-7" || len(dr.Files) != 2 {
		t.Fatalf("draft = %+v", dr)
	}
	for _, bad := range []map[string][]byte{
		{"SKILL.md": []byte(md), "../x": nil},
		{"SKILL.md": []byte(md), ".git/config": nil},
		{"SKILL.md": []byte(md), "a/.GIT/config": nil},
		{"SKILL.md": []byte(md), "scripts/.git": []byte("gitdir: ../assets/r\n")},
		{"SKILL.md": []byte(md), ".git./config": nil},
		{"SKILL.md": []byte(md), "/abs": nil},
		{"README.md": nil},
		{"SKILL.md": make([]byte, 1025)},
	} {
		if _, err := d.ProposeFiles(ctx, "other", bad, now); err == nil {
			t.Errorf("proposal of %v was taken", keys(bad))
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRejectMovesTheDraftAside(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, l := newDrafts(t)
	if _, err := d.ProposeDir(ctx, skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", nil), "pdf", now); err != nil {
		t.Fatal(err)
	}
	dst, dr, err := d.Reject(ctx, "pdf", now)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(l.RejectedDir(), "pdf-20261130T120000Z"); dst != want || !skilltest.Exists(filepath.Join(dst, "SKILL.md")) || dr.Hash == "" {
		t.Errorf("rejected to %s (hash %q), want %s", dst, dr.Hash, want)
	}
	if list, _ := d.List(ctx); len(list) != 0 {
		t.Errorf("a rejected draft is listed: %+v", list)
	}
	if _, _, err := d.Reject(ctx, "pdf", now); !errors.Is(err, ErrNoDraft) {
		t.Errorf("second reject = %v", err)
	}
}

// TestPromoteLocalArchivesTheSkillItReplaces: the skill standing in the
// layer is archived (restorable), never deleted, and the draft takes its
// place in one rename.
func TestPromoteLocalArchivesTheSkillItReplaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, l := newDrafts(t)
	layer := l.SkillsDir()
	old := filepath.Join(layer, "team", "pdf")
	writeSkill(t, old, "pdf")
	if _, err := d.ProposeDir(ctx, skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", map[string]string{"new.md": "new\n"}), "pdf", now); err != nil {
		t.Fatal(err)
	}
	existing := func() (*Existing, error) { return &Existing{Name: "pdf", Dir: old}, nil }
	p, err := d.PromoteLocal(ctx, "pdf", layer, existing, nil, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Dir != filepath.Join(layer, "pdf") || !skilltest.Exists(filepath.Join(p.Dir, "new.md")) || skilltest.Exists(old) || p.ArchivedHash == "" {
		t.Fatalf("promotion = %+v", p)
	}
	copies := curator.ArchivedCopies(curator.LayerDir{Layer: layering.Workspace, Dir: layer})
	if len(copies) != 1 || copies[0].Dir != p.Archived {
		t.Fatalf("archived = %+v", copies)
	}
	if err := copies[0].CanRestore(); err == nil {
		t.Error("restore over the promoted skill was allowed")
	}
	if err := os.RemoveAll(p.Dir); err != nil {
		t.Fatal(err)
	}
	if _, err := copies[0].Restore(); err != nil {
		t.Errorf("the replaced skill cannot be restored: %v", err)
	}
}

// TestPromoteLocalRefusesAndKeepsTheDraft: a draft with a problem, a check
// that refuses, and a path that is taken by something else all leave the
// draft where it was and the layer as it was.
func TestPromoteLocalRefusesAndKeepsTheDraft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, l := newDrafts(t)
	layer := l.SkillsDir()
	writeSkill(t, filepath.Join(l.DraftsDir(), "Bad"), "Bad")
	var invalid *InvalidError
	if _, err := d.PromoteLocal(ctx, "Bad", layer, nil, nil, nil, now); !errors.As(err, &invalid) || !strings.Contains(err.Error(), "name-not-lowercase") {
		t.Errorf("promote an invalid draft = %v", err)
	}
	if _, err := d.ProposeDir(ctx, skilltest.Skill(t, t.TempDir(), "pdf", "The pdf skill.", nil), "pdf", now); err != nil {
		t.Fatal(err)
	}
	no := errors.New("no")
	if _, err := d.PromoteLocal(ctx, "pdf", layer, nil, func(Draft) error { return no }, nil, now); !errors.Is(err, no) {
		t.Errorf("check refusal = %v", err)
	}
	// Something that is not a skill stands where the draft would go; the
	// replaced skill was archived, and is moved back.
	other := filepath.Join(layer, "deep", "pdf")
	writeSkill(t, other, "pdf")
	if err := os.MkdirAll(filepath.Join(layer, "pdf", "stuff"), 0o755); err != nil {
		t.Fatal(err)
	}
	existing := func() (*Existing, error) { return &Existing{Name: "pdf", Dir: other}, nil }
	if _, err := d.PromoteLocal(ctx, "pdf", layer, existing, nil, nil, now); err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("promote over a folder = %v", err)
	}
	if !skilltest.Exists(filepath.Join(l.DraftsDir(), "pdf", "SKILL.md")) || !skilltest.Exists(filepath.Join(other, "SKILL.md")) {
		t.Error("a refused promotion moved the draft or left the replaced skill archived")
	}
}

// TestConcurrentPromotions: two drafts promoted at once both land, and
// two promotions of one draft give it to exactly one of them.
func TestConcurrentPromotions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, l := newDrafts(t)
	for _, n := range []string{"one", "two"} {
		if _, err := d.ProposeDir(ctx, skilltest.Skill(t, t.TempDir(), n, "The "+n+" skill.", nil), n, now); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i, n := range []string{"one", "two", "one", "two"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.PromoteLocal(ctx, n, l.SkillsDir(), nil, nil, nil, now)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrNoDraft):
			t.Errorf("promotion failed: %v", err)
		}
	}
	if ok != 2 || !skilltest.Exists(filepath.Join(l.SkillsDir(), "one", "SKILL.md")) || !skilltest.Exists(filepath.Join(l.SkillsDir(), "two", "SKILL.md")) {
		t.Errorf("%d promotions succeeded; want one per draft", ok)
	}
}
