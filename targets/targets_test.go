package targets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/workspace"
)

// TestRelLocation: a location in an AGENTS.md reads the same on every
// machine: relative below the file's folder, ~/ below the home, else
// as it is.
func TestRelLocation(t *testing.T) {
	t.Parallel()
	home := filepath.FromSlash("/home/ann")
	env := hostenv.New(home, []string{"HOME=" + home, "USERPROFILE=" + home})
	base := filepath.Join(home, "work", "proj")
	for loc, want := range map[string]string{
		"": "",
		filepath.Join(base, "skills", "a", "SKILL.md"):   "skills/a/SKILL.md",
		filepath.Join(home, ".claude", "skills", "b"):    "~/.claude/skills/b",
		filepath.FromSlash("/opt/skills/c/SKILL.md"):     "/opt/skills/c/SKILL.md",
		filepath.Join(home, "work", "other", "SKILL.md"): "~/work/other/SKILL.md",
	} {
		if got := relLocation(env, base, loc); got != want {
			t.Errorf("relLocation(%s) = %q, want %q", loc, got, want)
		}
	}
}

// TestCheckPathsRefusesLink: a target reached through a symbolic link
// below the workspace is refused before anything is written; one through
// real folders (made or not yet) is taken.
func TestCheckPathsRefusesLink(t *testing.T) {
	t.Parallel()
	ws, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(ws, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	home := t.TempDir()
	env := hostenv.New(ws, []string{"HOME=" + home, "USERPROFILE=" + home})
	ok := Places{Workspace: ws, Env: env, Targets: []materialize.Target{{Dir: filepath.Join(ws, ".agents", "skills")}}}
	if err := ok.CheckPaths(); err != nil {
		t.Errorf("a target through folders: %v", err)
	}
	bad := Places{Workspace: ws, Env: env, Targets: []materialize.Target{{Dir: filepath.Join(ws, ".claude", "skills")}}}
	if err := bad.CheckPaths(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a target through a link: %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "skills")); !os.IsNotExist(err) {
		t.Errorf("something was written through the link: %v", err)
	}
}

// TestGiveUpTrustsNoList: the cache's list of kept targets is checked
// like any file: a planted list naming another workspace's target, or a
// folder no record names, changes nothing there; one with a relative
// path is refused whole, with a warning.
func TestGiveUpTrustsNoList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	ws, other := filepath.Join(root, "ws"), filepath.Join(root, "other")
	cache := filepath.Join(ws, workspace.CacheName)
	theirs, plain := filepath.Join(root, "theirs"), filepath.Join(root, "plain")
	for _, d := range []string{cache, filepath.Join(other, workspace.CacheName), filepath.Join(plain, "notes")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(root, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: alpha\ndescription: A.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alpha := materialize.TargetSkill{Skill: materialize.Skill{Name: "alpha", Files: os.DirFS(src)}}
	if _, err := materialize.SyncTarget(ctx, materialize.Target{Dir: theirs, Skills: []materialize.TargetSkill{alpha}, Workspace: other}); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(cache, materialize.TargetsName)
	p := Places{Workspace: ws, Env: hostenv.New(ws, nil), Cache: cache, Config: filepath.Join(ws, "skillsync.yaml")}
	for _, tc := range []struct {
		list  string
		warns bool
	}{
		{list: `{"version": 1, "configs": {"skillsync.yaml": ["` + filepath.ToSlash(theirs) + `", "` + filepath.ToSlash(plain) + `"]}}`},
		{list: `{"version": 1, "configs": {"skillsync.yaml": ["theirs"]}}`, warns: true},
	} {
		if err := os.WriteFile(list, []byte(tc.list), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := p.Sync(ctx, &layering.Catalog{}, &materialize.Manifest{})
		if err != nil || (len(res.Warnings) > 0) != tc.warns || len(res.Targets) != 0 {
			t.Errorf("list %s: %+v, %v", tc.list, res, err)
		}
		if _, err := os.Stat(filepath.Join(theirs, "alpha", "SKILL.md")); err != nil {
			t.Errorf("list %s: another workspace's copy: %v", tc.list, err)
		}
		if _, err := os.Stat(filepath.Join(plain, "notes")); err != nil {
			t.Errorf("list %s: a folder of the user's: %v", tc.list, err)
		}
	}
}

// TestListKeepsWhatItCannotRead: a sync that knows no home directory
// keeps the list's entries below one (~/...) as they are, rather than
// drop them and never give those folders up.
func TestListKeepsWhatItCannotRead(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	cache := filepath.Join(ws, workspace.CacheName)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(cache, materialize.TargetsName)
	if err := os.WriteFile(list, []byte(`{"version": 1, "configs": {"skillsync.yaml": ["~/.agent/skills"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Places{Workspace: ws, Env: hostenv.New(ws, []string{"HOME="}), Cache: cache, Config: filepath.Join(ws, "skillsync.yaml")}
	if _, err := p.Sync(context.Background(), &layering.Catalog{}, &materialize.Manifest{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(list); !strings.Contains(string(data), "~/.agent/skills") {
		t.Errorf("the list lost its entry below the home: %s", data)
	}
}

// TestCheckPathsWithAHomeWrittenOddly: a home directory given with a
// trailing separator (HOME=/home/ann/) is still the home a target is
// checked below: a link on the way is refused.
func TestCheckPathsWithAHomeWrittenOddly(t *testing.T) {
	t.Parallel()
	ws, home, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(home, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	env := hostenv.New(ws, []string{"HOME=" + home + string(filepath.Separator), "USERPROFILE=" + home + string(filepath.Separator)})
	p := Places{Workspace: ws, Env: env, Targets: []materialize.Target{{Dir: filepath.Join(home, ".claude", "skills")}}}
	if err := p.CheckPaths(); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a target through a link below HOME=%s/: %v, want it refused", home, err)
	}
}
