package targets

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/skill"
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

// TestCheckTargetRefusesLink: a target reached through a symbolic link
// below the workspace or the home directory is refused
// (materialize.ErrTargetLinked), naming the target, the link and, where
// the link can be followed, the real path to point the target at; one
// through real folders (made or not yet) is taken. Nothing is written.
func TestCheckTargetRefusesLink(t *testing.T) {
	t.Parallel()
	ws, home, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	dot := filepath.Join(home, "dot", "claude")
	if err := os.MkdirAll(dot, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(ws, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	for _, l := range [][2]string{
		{dot, filepath.Join(home, ".claude")},                         // a dotfiles manager's link
		{filepath.Join("dot", "claude"), filepath.Join(home, ".rel")}, // relative
		{filepath.Join(home, "gone"), filepath.Join(home, ".dangling")},
		{elsewhere, filepath.Join(ws, ".agents")},
	} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(ws, ".codex", "skills")); err != nil {
		t.Fatal(err)
	}
	env := hostenv.New(ws, []string{"HOME=" + home, "USERPROFILE=" + home})
	p := Places{Workspace: ws, Env: env}
	for _, tc := range []struct {
		dir  string
		link string // "" when the target is taken
		want string // in the message besides the target and the link
	}{
		{dir: filepath.Join(ws, ".opencode", "skills")},
		{dir: filepath.Join(home, ".config", "skills")},
		{dir: filepath.Join(home, ".claude", "skills"), link: filepath.Join(home, ".claude"),
			want: "point the target at " + filepath.Join(dot, "skills") + " (dir: ~/dot/claude/skills)"},
		{dir: filepath.Join(home, ".rel", "a", "skills"), link: filepath.Join(home, ".rel"),
			want: "point the target at " + filepath.Join(dot, "a", "skills") + " (dir: ~/dot/claude/a/skills)"},
		{dir: filepath.Join(home, ".dangling", "skills"), link: filepath.Join(home, ".dangling"), want: "cannot be followed"},
		{dir: filepath.Join(ws, ".claude", "skills"), link: filepath.Join(ws, ".claude"), want: "point the target at " + filepath.Join(elsewhere, "skills")},
		{dir: filepath.Join(ws, ".codex", "skills"), link: filepath.Join(ws, ".codex", "skills"), want: "point the target at " + elsewhere + ","},
	} {
		err := p.CheckTarget(tc.dir)
		if tc.link == "" {
			if err != nil {
				t.Errorf("%s, through folders: %v", tc.dir, err)
			}
			continue
		}
		if !errors.Is(err, materialize.ErrTargetLinked) || !materialize.IsRefused(err) {
			t.Errorf("%s: %v, want ErrTargetLinked", tc.dir, err)
			continue
		}
		for _, w := range []string{"target " + tc.dir + " ", tc.link + " is a symbolic link", tc.want} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.dir, err, w)
			}
		}
	}
	if entries, err := os.ReadDir(elsewhere); err != nil || len(entries) != 0 {
		t.Errorf("something was written through a link: %v %v", entries, err)
	}
}

// TestSyncRefusesALinkedTargetAlone: a target reached through a symbolic
// link (a dotfiles manager's ~/.claude, a link planted in the workspace),
// and an AGENTS.md file whose link leads out of the workspace, are each
// left as they are, nothing written through the link, and reported
// refused with the refusal among their errors; the other target and
// AGENTS.md file are written, and the error names each refusal. The list
// of kept targets keeps the refused one, so that it is given up, not
// stranded, once the config drops it.
func TestSyncRefusesALinkedTargetAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
	dot := filepath.Join(home, "dot", "claude")
	if err := os.MkdirAll(dot, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dot, filepath.Join(home, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, ".codex")); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(outside, "AGENTS.md")
	if err := os.WriteFile(theirs, []byte("not the workspace's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirs, filepath.Join(ws, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(ws, workspace.CacheName)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	cat, _ := catalogOf(t, "alpha")
	linkedHome, planted, own := filepath.Join(home, ".claude", "skills"), filepath.Join(ws, ".codex", "skills"), filepath.Join(ws, ".agents", "skills")
	p := Places{Workspace: ws, Env: hostenv.New(ws, []string{"HOME=" + home, "USERPROFILE=" + home}), Cache: cache, Config: filepath.Join(ws, "skillsync.yaml"),
		Targets:  []materialize.Target{{Dir: linkedHome}, {Dir: planted}, {Dir: own}},
		AgentsMD: []string{filepath.Join(ws, "AGENTS.md"), filepath.Join(ws, "docs", "AGENTS.md")}}
	res, err := p.Sync(ctx, cat, &materialize.Manifest{})
	if !errors.Is(err, materialize.ErrTargetLinked) || !errors.Is(err, materialize.ErrOutsideWorkspace) {
		t.Fatalf("sync: %v, want the linked targets and AGENTS.md refused", err)
	}
	for _, w := range []string{linkedHome, planted, filepath.Join(dot, "skills"), filepath.Join(ws, "AGENTS.md")} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not name %s: %v", w, err)
		}
	}
	refused := map[string]bool{}
	for _, tr := range res.Targets {
		if tr.Refused != (len(tr.Errors) == 1) {
			t.Errorf("%s: refused %v with errors %q", tr.Dir, tr.Refused, tr.Errors)
		}
		refused[tr.Dir] = tr.Refused
	}
	want := map[string]bool{linkedHome: true, planted: true, own: false, filepath.Join(ws, "AGENTS.md"): true, filepath.Join(ws, "docs", "AGENTS.md"): false}
	if !maps.Equal(refused, want) {
		t.Errorf("reports: %v, want %v", refused, want)
	}
	if _, err := os.Stat(filepath.Join(own, "alpha", "SKILL.md")); err != nil {
		t.Errorf("the other target was not placed: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "docs", "AGENTS.md")); err != nil || !strings.Contains(string(data), "alpha") {
		t.Errorf("the other AGENTS.md was not written: %q %v", data, err)
	}
	for d, n := range map[string]int{dot: 0, outside: 1} {
		if entries, err := os.ReadDir(d); err != nil || len(entries) != n {
			t.Errorf("written through a link into %s: %v %v", d, entries, err)
		}
	}
	if data, err := os.ReadFile(theirs); err != nil || string(data) != "not the workspace's\n" {
		t.Errorf("the AGENTS.md out of the workspace was written: %q %v", data, err)
	}
	list, err := materialize.ReadTargetList(filepath.Join(cache, materialize.TargetsName))
	if err != nil || !slices.Contains(list.Configs["skillsync.yaml"], "~/.claude/skills") {
		t.Errorf("the list dropped the refused target: %+v %v", list, err)
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

// TestCheckTargetWithAHomeWrittenOddly: a home directory given with a
// trailing separator (HOME=/home/ann/) is still the home a target is
// checked below: a link on the way is refused.
func TestCheckTargetWithAHomeWrittenOddly(t *testing.T) {
	t.Parallel()
	ws, home, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(home, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	env := hostenv.New(ws, []string{"HOME=" + home + string(filepath.Separator), "USERPROFILE=" + home + string(filepath.Separator)})
	p := Places{Workspace: ws, Env: env, Targets: []materialize.Target{{Dir: filepath.Join(home, ".claude", "skills")}}}
	if err := p.CheckTarget(p.Targets[0].Dir); !errors.Is(err, materialize.ErrTargetLinked) {
		t.Errorf("a target through a link below HOME=%s/: %v, want it refused", home, err)
	}
	if r := p.Refusals(); len(r) != 1 || r[p.Targets[0].Dir] == nil {
		t.Errorf("Refusals: %v", r)
	}
}

// catalogOf is a catalog of one workspace skill of each name, each in a
// folder of its own; src is the folder holding them.
func catalogOf(t *testing.T, names ...string) (cat *layering.Catalog, src string) {
	t.Helper()
	src = t.TempDir()
	var skills []skill.Skill
	for _, name := range names {
		dir := filepath.Join(src, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: The skill "+name+".\n---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		skills = append(skills, skill.Skill{Name: name, Description: "The skill " + name + ".", Files: os.DirFS(dir), File: "SKILL.md", Path: name})
	}
	in := layering.Input{Layer: layering.Workspace, Skills: skills, Dir: func(s skill.Skill) string { return filepath.Join(src, s.Name) }}
	return layering.Build([]layering.Input{in}, layering.Options{}), src
}

// TestGiveUpLeavesALinkedFolder: a target folder taken out of the config
// and now reached through a symbolic link is not emptied through the
// link; while it holds a record it stays listed, with a warning, so that
// once the link is replaced by the folder the next sync gives it up
// rather than strand its copies. A linked folder without a record has
// nothing to give up and leaves the list.
func TestGiveUpLeavesALinkedFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, home := t.TempDir(), t.TempDir()
	real, empty := filepath.Join(home, "dot", "claude"), filepath.Join(home, "dot", "empty")
	for _, d := range []string{real, empty, filepath.Join(ws, workspace.CacheName)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cat, _ := catalogOf(t, "alpha")
	env := hostenv.New(ws, []string{"HOME=" + home, "USERPROFILE=" + home})
	p := Places{Workspace: ws, Env: env, Cache: filepath.Join(ws, workspace.CacheName), Config: filepath.Join(ws, "skillsync.yaml"),
		Targets: []materialize.Target{{Dir: filepath.Join(home, ".claude", "skills")}}}
	// Placed while ~/.claude was a folder; then a dotfiles manager moved
	// it and left a link, and the config dropped the target.
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Sync(ctx, cat, &materialize.Manifest{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(home, ".claude", "skills"), filepath.Join(real, "skills")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(home, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(empty, filepath.Join(home, ".empty")); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(p.Cache, materialize.TargetsName)
	if err := os.WriteFile(list, []byte(`{"version": 1, "configs": {"skillsync.yaml": ["~/.claude/skills", "~/.empty/skills"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Targets = nil
	res, err := p.Sync(ctx, cat, &materialize.Manifest{})
	if err != nil || len(res.Targets) != 0 {
		t.Fatalf("sync without the target: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(real, "skills", "alpha", "SKILL.md")); err != nil {
		t.Errorf("the copy was removed through the link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, "skills", materialize.RecordName)); err != nil {
		t.Errorf("the record was removed through the link: %v", err)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, filepath.Join(home, ".claude", "skills")) || !strings.Contains(w, "symbolic link") {
		t.Errorf("the warnings do not say why the folder was left: %q", res.Warnings)
	}
	kept, err := materialize.ReadTargetList(list)
	if err != nil || !slices.Equal(kept.Configs["skillsync.yaml"], []string{"~/.claude/skills"}) {
		t.Fatalf("the list: %+v %v, want the linked folder with a record kept, the other dropped", kept, err)
	}

	// The link replaced by the folder: the next sync gives it up.
	if err := os.Remove(filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(real, filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Sync(ctx, cat, &materialize.Manifest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "skills", "alpha")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder was not given up once the link was gone: %v", err)
	}
}

// TestRootOfATarget: the folder from which SyncTarget refuses a link on
// the way is the workspace for a target below it, else the home
// directory for one below that, else none.
func TestRootOfATarget(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ws := filepath.Join(home, "work", "proj")
	p := Places{Workspace: ws, Env: hostenv.New(ws, []string{"HOME=" + home, "USERPROFILE=" + home})}
	for dir, want := range map[string]string{
		filepath.Join(ws, ".claude", "skills"):   ws,
		filepath.Join(home, ".claude", "skills"): home,
		filepath.Join(t.TempDir(), "skills"):     "",
		ws:                                       home,
	} {
		if got := p.root(dir); got != want {
			t.Errorf("root(%s) = %q, want %q", dir, got, want)
		}
	}
}
