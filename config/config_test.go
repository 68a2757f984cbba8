package config

import (
	"os"

	"github.com/skillsync/skillsync/internal/hostenv"

	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/all"
	dirsource "github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/git"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	skilltest.WriteFile(t, path, text)
	return path
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []string // substrings of the error, each with the file
	}{
		{"unknown key", "workspace: .\ncolour: blue\n", []string{":2: unknown key \"colour\" in the config"}},
		{"wrong type", "strict: maybe\n", []string{":1: key \"strict\" in the config: \"maybe\" is not true or false"}},
		{"duration without a unit", "repositories:\n  - git: file:///x\n    timeout: 10\n", []string{":3: key \"timeout\" in repositories[0]: \"10\" is not a duration: give a number with a unit"}},
		{"list for a value", "workspace: [a]\n", []string{":1: key \"workspace\" in the config: a list is not a single value here"}},
		{"yaml mistake below its block", "# c\n# c\nworkspace: .\nrepositories:\n  - name: a\n    dir: ../x\n   git: y\n", []string{":7: did not find expected '-' indicator: \"git: y\""}},
		{"yaml bracket left open", "workspace: .\nhidden: [a, b\nstrict: true\n", []string{":2: did not find expected ',' or ']': \"hidden: [a, b\""}},
		{"yaml quote left open", "strict: true\nworkspace: \"abc\nuser: x\n", []string{":2: found unexpected end of stream: \"workspace: \\\"abc\""}},
		{"variable in a target", "targets:\n  - dir: $HOME/.claude/skills\n", []string{":2: targets[0]: path \"$HOME/.claude/skills\" holds a variable, which skillsync does not expand"}},
		{"variable in the workspace", "workspace: ${HOME}/w\n", []string{":1: workspace: path \"${HOME}/w\" holds a variable"}},
		{"~user in a dir source", "repositories:\n  - dir: ~root/x\n", []string{":2: repositories[0]: dir: path \"~root/x\" begins with ~NAME, which is not expanded"}},
		{"NUL in a target", "targets:\n  - dir: \"a\\0b\"\n", []string{":2: targets[0]: path \"a\\x00b\" holds a NUL byte"}},
		{"variable in a key file", "repositories:\n  - git: file:///x\n    auth:\n      ssh_key_file: $HOME/.ssh/id\n", []string{":2: repositories[0]: auth: path \"$HOME/.ssh/id\" holds a variable"}},
		{"variable in a dsn file", "repositories:\n  - dsn_file: ${XDG_CONFIG_HOME}/dsn\n", []string{":2: repositories[0]: dsn_file: path \"${XDG_CONFIG_HOME}/dsn\" holds a variable"}},
		{"dir source is the root", "repositories:\n  - dir: /\n", []string{":2: repositories[0]: dir: / is the file system root or the home folder"}},
		{"yaml tab indent", "repositories:\n\t- embedded: builtin\n", []string{":2: found character that cannot start any token; YAML indents with spaces, not tabs"}},
		{"unknown repository key", "repositories:\n  - name: a\n    embedded: builtin\n    branch: main\n", []string{":4: unknown key \"branch\" in repositories[0]"}},
		{"two errors at once", "strict: 3x\nhidden: 5\nnope: 1\n", []string{":1: key \"strict\"", ":2: key \"hidden\"", ":3: unknown key \"nope\""}},
		{"two sources named alike", "repositories:\n  - name: team\n    dir: a\n  - name: Team\n    dir: b\n", []string{":4: repositories[1]: name \"Team\" is already repositories[0]'s (line 2)"}},
		{"repository with no kind", "repositories:\n  - name: a\n", []string{":2: repositories[0]: set exactly one of embedded: builtin, dir: PATH, git: URL or postgres: ENV_NAME"}},
		{"repository with two kinds", "repositories:\n  - embedded: builtin\n    dir: x\n", []string{":2: repositories[0]: set exactly one of embedded: builtin, dir: PATH, git: URL or postgres: ENV_NAME"}},
		{"git path with ..", "repositories:\n  - git: file:///x\n    path: a/../../b\n", []string{":2: repositories[0]: path \"a/../../b\" must stay inside the repository"}},
		{"git path absolute", "repositories:\n  - git: file:///x\n    path: /etc\n", []string{"must stay inside the repository"}},
		{"ref on a dir source", "repositories:\n  - dir: x\n    ref: main\n", []string{"belong to git: sources"}},
		{"bad timeout", "repositories:\n  - git: file:///x\n    timeout: soon\n", []string{":3: key \"timeout\" in repositories[0]"}},
		{"unknown auth key", "repositories:\n  - git: file:///x\n    auth:\n      token: abc\n", []string{":4: unknown key \"token\" in repositories[0].auth"}},
		{"not a mapping", "- a\n", []string{"the config must be a mapping"}},
		{"bad yaml", "a: [\n", []string{"did not find expected"}},
		{"user with a slash", "user: a/b\n", []string{":1: user \"a/b\" is not one folder name"}},
		{"empty file", "", []string{"the file is empty"}},
		{"inline password", "repositories:\n  - git: https://bot:s3cr/t#x@git.example.com/acme/skills.git\n", []string{"the git URL holds a password", "allow_inline_credentials: true"}},
		{"bad skills glob", "repositories:\n  - dir: x\n    skills: [\"[\"]\n", []string{":2: repositories[0]"}},
		{"schema on a git source", "repositories:\n  - git: file:///x\n    schema: s\n", []string{"schema and create belong to postgres: sources"}},
		{"postgres and dsn_file", "repositories:\n  - postgres: PG\n    dsn_file: f\n", []string{"not both"}},
		{"negative max_skill_size", "max_skill_size: -1\n", []string{":1: max_skill_size -1: a limit is a positive number of bytes"}},
		{"only comments", "# nothing yet\n", []string{"the file is empty"}},
		{"workspace is a file", "workspace: skillsync.yaml\n", []string{"is not a directory"}},
		{"agents_md with dir", "targets:\n  - agents_md: AGENTS.md\n    dir: x\n", []string{":2: targets[0]: agents_md names a file and takes no dir or mode"}},
		{"agents_md with mode", "targets:\n  - agents_md: AGENTS.md\n    mode: copy\n", []string{"takes no dir or mode"}},
		{"target with neither", "targets:\n  - mode: copy\n", []string{"dir (a folder agents read) or agents_md (a file such as AGENTS.md) is required"}},
		{"agents_md outside", "targets:\n  - agents_md: ../AGENTS.md\n", []string{":2: agents_md", "is not a file within the workspace"}},
		{"agents_md is the workspace", "targets:\n  - agents_md: .\n", []string{"is not a file within the workspace"}},
		{"agents_md in the cache", "targets:\n  - agents_md: .skills-cache/AGENTS.md\n", []string{"is in the cache"}},
		{"agents_md in a target", "targets:\n  - dir: .claude/skills\n  - agents_md: .claude/skills/AGENTS.md\n", []string{":3: agents_md", "is in targets[0] (line 2)"}},
		{"agents_md twice", "targets:\n  - agents_md: AGENTS.md\n  - agents_md: ./AGENTS.md\n", []string{":3: agents_md", "repeats the entry of line 2"}},
		{"target is the cache", "targets:\n  - dir: .skills-cache\n", []string{":2: targets[0]", "is the cache or inside it"}},
		{"target inside the cache", "targets:\n  - dir: .skills-cache/x\n", []string{"is the cache or inside it"}},
		{"target in the workspace layer", "targets:\n  - dir: skills/claude\n", []string{"is the workspace layer or inside it"}},
		{"target in the user layer", "user: ann\ntargets:\n  - dir: ann/skills\n", []string{"is the user layer or inside it"}},
		{"target in the global layer", "global: g\ntargets:\n  - dir: g/x\n", []string{"is the global layer or inside it"}},
		{"target holds a layer", "workspace: ws\ntargets:\n  - dir: ..\n", []string{"holds the cache"}},
		{"target is the workspace", "targets:\n  - dir: .\n", []string{"is the workspace"}},
		{"target is the root", "targets:\n  - dir: /\n", []string{"is the file system root"}},
		{"target is home", "targets:\n  - dir: \"~\"\n", []string{"is the home directory"}},
		{"targets nested", "targets:\n  - dir: .claude\n  - dir: .claude/skills\n", []string{":3: targets[1]", "overlaps targets[0] (line 2)"}},
		{"source is a target", "repositories:\n  - dir: .claude/skills\ntargets:\n  - dir: .claude/skills\n", []string{":2: repositories[0] (skills) dir ", "is targets[0] (line 4) or inside it, a folder skillsync writes into"}},
		{"source inside a target", "repositories:\n  - name: t\n    dir: out/a\ntargets:\n  - dir: out\n", []string{"is targets[0] (line 5) or inside it"}},
		{"source holds a target", "repositories:\n  - name: t\n    dir: .claude\ntargets:\n  - dir: .claude/skills\n", []string{"holds targets[0] (line 5)"}},
		{"source is the cache", "repositories:\n  - name: t\n    dir: .skills-cache/x\n", []string{"is the cache or inside it"}},
		{"target twice, two modes", "targets:\n  - dir: a\n  - dir: a\n    mode: symlink\n", []string{"names the same folder with mode symlink, while mode copy is targets[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.text)
			_, err := Load(path, all.Kinds())
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the file and %q", err, want)
				}
			}
		})
	}
}

func TestAgentsMDTarget(t *testing.T) {
	path := writeConfig(t, "targets:\n  - dir: .claude/skills\n  - agents_md: AGENTS.md\n  - agents_md: docs/agents/AGENTS.md\n")
	cfg, err := Load(path, all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Dir(path)
	want := []AgentsMDTarget{{Path: filepath.Join(ws, "AGENTS.md"), Line: 3}, {Path: filepath.Join(ws, "docs", "agents", "AGENTS.md"), Line: 4}}
	if len(cfg.Targets) != 1 || !slices.Equal(cfg.AgentsMD, want) {
		t.Errorf("targets %+v, agents_md %+v, want %+v", cfg.Targets, cfg.AgentsMD, want)
	}
}

func TestConfigResolves(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `workspace: ws
user: ann
global: g
strict: true
hidden: [x]
repositories:
  - embedded: builtin
  - dir: ../Team Skills
  - name: builtin
    dir: other
  - git: https://git.example.com/acme/skills.git
    ref: v1
    depth: 0
    timeout: 5s
    auth:
      password_env: TEAM_TOKEN
      ssh_key_file: keys/id
max_file_size: 1024
`)
	cfg, err := Load(path, all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Dir(path)
	if cfg.Workspace != filepath.Join(base, "ws") || cfg.Global != filepath.Join(base, "g") || !cfg.Strict || cfg.User != "ann" {
		t.Errorf("cfg = %+v", cfg)
	}
	var names []string
	for _, r := range cfg.Sources {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "builtin team-skills builtin_2 skills" {
		t.Errorf("source names = %s", got)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "builtin_2") {
		t.Errorf("warnings = %v", cfg.Warnings)
	}
	if d := cfg.Sources[1].Settings.(Directory).Directory(); d != filepath.Join(filepath.Dir(base), "Team Skills") {
		t.Errorf("dir = %s", d)
	}
	g := cfg.Sources[3]
	gs, _ := g.Settings.(*git.Settings)
	if g.Kind != git.Kind || gs == nil || gs.Ref != "v1" || gs.Depth == nil || *gs.Depth != 0 || g.Timeout != 5*time.Second ||
		gs.Auth.PasswordEnv != "TEAM_TOKEN" || gs.Auth.SSHKeyFile != filepath.Join(base, "keys", "id") || cfg.Limits.MaxFileSize != 1024 {
		t.Errorf("git source = %+v %+v, max_file_size %d", g, gs, cfg.Limits.MaxFileSize)
	}
}

func TestStarterLoads(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, Starter), all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sources) != 0 {
		t.Errorf("starter repositories = %+v, want none: the built-in skills are asked for", cfg.Sources)
	}
	// One commented line enables the built-in skills.
	on := strings.Replace(Starter, "  # - embedded: builtin\n", "  - embedded: builtin\n", 1)
	if on == Starter {
		t.Fatal("the starter has no commented line for the built-in skills")
	}
	cfg, err = Load(writeConfig(t, on), all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sources) != 1 || cfg.Sources[0].Name != "builtin" {
		t.Errorf("starter with the built-in line = %+v", cfg.Sources)
	}
}

func TestFindConfigOrder(t *testing.T) {
	t.Parallel()
	dir, home := t.TempDir(), t.TempDir()
	in := func(vars ...string) hostenv.Env { return hostenv.New(dir, append([]string{"HOME=" + home}, vars...)) }
	cfg, err := FindIn(in(), "", all.Kinds())
	if err != nil || cfg.File != "" || cfg.Workspace != dir || cfg.Sources[0].Settings.(*dirsource.EmbeddedSettings).Name != "builtin" {
		t.Fatalf("default config = %+v, %v", cfg, err)
	}
	env := writeConfig(t, "strict: true\n")
	if cfg, err = FindIn(in("SKILLSYNC_CONFIG="+env), "", all.Kinds()); err != nil || cfg.File != env {
		t.Fatalf("env config = %+v, %v", cfg, err)
	}
	flag := writeConfig(t, "strict: false\n")
	if cfg, err = FindIn(in("SKILLSYNC_CONFIG="+env), flag, all.Kinds()); err != nil || cfg.File != flag {
		t.Fatalf("flag config = %+v, %v", cfg, err)
	}
	if _, err := FindIn(in("SKILLSYNC_CONFIG="+filepath.Join(dir, "missing.yaml")), "", all.Kinds()); err == nil {
		t.Fatal("a config named by the environment must exist")
	}
	here := filepath.Join(dir, FileName)
	if err := os.WriteFile(here, []byte("strict: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = FindIn(in(), "", all.Kinds()); err != nil || cfg.File != here || len(cfg.Warnings) != 0 {
		t.Fatalf("the working directory's config = %+v, %v", cfg, err)
	}
	if cfg, err := FindIn(hostenv.New(t.TempDir(), []string{"HOME=" + home}), "", all.Kinds()); err != nil || len(cfg.Warnings) != 0 {
		t.Errorf("a folder with no config above: %v, warnings %q", err, cfg.Warnings)
	}
	// The home folder is no workspace, with a config there or without.
	if _, err := FindIn(hostenv.New(home, []string{"HOME=" + home}), "", all.Kinds()); err == nil || !strings.Contains(err.Error(), "is the home directory") {
		t.Errorf("the default config in the home folder: %v", err)
	}

	// In a subfolder of a workspace, the default says so: it would start
	// a second workspace there.
	sub := filepath.Join(dir, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err = FindIn(hostenv.New(sub, []string{"HOME=" + home}), "", all.Kinds())
	if err != nil || cfg.File != "" || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], here+" is in a folder above: run skillsync in "+dir) {
		t.Errorf("default config in a subfolder: %v, warnings %q", err, cfg.Warnings)
	}
}

// TestInlinePasswordRefusedWithoutLeaking: a config URL that carries a
// password is refused without printing it, even when net/url cannot parse
// it, and accepted when the entry says so.
func TestInlinePasswordRefusedWithoutLeaking(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"https://bot:s3cret@git.example.com/a.git", "https://bot:s3cr/t#x y@git.example.com/a.git", "https://bot:s3%zz@git.example.com/a.git"} {
		_, err := Load(writeConfig(t, "repositories:\n  - git: "+url+"\n"), all.Kinds())
		if err == nil || strings.Contains(err.Error(), "s3cr") || !strings.Contains(err.Error(), "allow_inline_credentials") {
			t.Errorf("%s: %v", url, err)
		}
		if _, err := Load(writeConfig(t, "repositories:\n  - git: "+url+"\n    allow_inline_credentials: true\n"), all.Kinds()); err != nil {
			t.Errorf("%s allowed: %v", url, err)
		}
	}
}

// TestASourceNameThatChangesIsSaid: a configured name that is no folder
// name is used in a form that is, and a name an earlier source has is
// used with a number; the config says which, naming the file and the
// line: the warning is printed where the config is used, which may be far
// from it (a user config, the global one). A derived name that changes
// as it becomes a folder name changes silently, as nobody wrote it.
func TestASourceNameThatChangesIsSaid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       []string // after "FILE", one a warning
	}{
		{"not a folder name", "repositories:\n  - name: \"../x\"\n    dir: a\n  - name: team\n    dir: b\n  - dir: Team Skills\n",
			[]string{`:2: repositories[0]: name "../x" is used as "source..-x"`}},
		{"an earlier source's", "strict: true\nrepositories:\n  - embedded: builtin\n  - dir: a\n  - name: builtin\n    dir: b\n",
			[]string{`:5: the source's name "builtin" is an earlier source's too: it is used as "builtin_2"`}},
		{"both", "repositories:\n  - dir: a/team\n  - name: \"../x\"\n    dir: b\n  - dir: c/team\n",
			[]string{`:3: repositories[1]: name "../x" is used as`, `:5: the source's name "team" is an earlier source's too`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			cfg, err := Load(path, all.Kinds())
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", cfg.Warnings, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(cfg.Warnings[i], path+w) {
					t.Errorf("warning %q does not start with %q", cfg.Warnings[i], path+w)
				}
			}
		})
	}
}

// TestSourceFoldersAsTheyLead: a source that reaches a target through a
// link is refused as one naming it would be; a source that holds the
// workspace (a monorepo) is fine where discovery never looks at what
// skillsync writes, its cache and an agent's dot-folder.
func TestSourceFoldersAsTheyLead(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "repositories:\n  - name: loop\n    dir: via\ntargets:\n  - dir: out\n")
	dir := filepath.Dir(path)
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("out", filepath.Join(dir, "via")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, all.Kinds()); err == nil || !strings.Contains(err.Error(), "repositories[0] (loop) dir ") || !strings.Contains(err.Error(), "is targets[0] (line 5) or inside it") {
		t.Errorf("a source linked to a target: %v", err)
	}

	mono := t.TempDir()
	ws := filepath.Join(mono, "tools", "ws")
	skilltest.WriteFile(t, filepath.Join(ws, FileName), "repositories:\n  - name: mono\n    dir: ../..\ntargets:\n  - dir: .claude/skills\n")
	if _, err := Load(filepath.Join(ws, FileName), all.Kinds()); err != nil {
		t.Errorf("a monorepo that holds the workspace: %v", err)
	}
	skilltest.WriteFile(t, filepath.Join(ws, FileName), "repositories:\n  - name: mono\n    dir: ../..\ntargets:\n  - dir: skills-out\n")
	if _, err := Load(filepath.Join(ws, FileName), all.Kinds()); err == nil || !strings.Contains(err.Error(), "holds targets[0] (line 5) where it looks for skills") {
		t.Errorf("a monorepo that holds a target discovery walks: %v", err)
	}
}

// TestTargetBelowNoHome: a target below ~ where no home directory is
// known is a config error naming the line, not a folder named ~ in the
// workspace.
func TestTargetBelowNoHome(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "targets:\n  - dir: ~/.claude/skills\n")
	_, err := LoadIn(hostenv.New(filepath.Dir(path), []string{"HOME=", "USERPROFILE="}), path, all.Kinds())
	if err == nil || !strings.Contains(err.Error(), "skillsync.yaml:2:") || !strings.Contains(err.Error(), "HOME is not set") {
		t.Errorf("a ~ target with no home: %v", err)
	}
	if _, err := LoadIn(hostenv.New(filepath.Dir(path), []string{"HOME=" + t.TempDir()}), path, all.Kinds()); err != nil {
		t.Errorf("a ~ target with a home: %v", err)
	}
	for _, text := range []string{"global: ~/skills\n", "targets:\n  - agents_md: ~/AGENTS.md\n"} {
		path := writeConfig(t, text)
		if _, err := LoadIn(hostenv.New(filepath.Dir(path), []string{"HOME=", "USERPROFILE="}), path, all.Kinds()); err == nil || !strings.Contains(err.Error(), "HOME is not set") {
			t.Errorf("%q with no home: %v", text, err)
		}
	}
}

// TestLoadRecordsTheFileItRead: a loaded config carries the stat data of
// the file it was read from, so that the daemon tells an edit made since
// (even one landing while the config loaded) from the file it loaded.
// Through a link it is the linked file's, as a ConfigMap mounts one.
func TestLoadRecordsTheFileItRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "real.yaml")
	skilltest.WriteFile(t, file, "repositories: []\n")
	link := filepath.Join(dir, FileName)
	if err := os.Symlink(file, link); err != nil {
		t.Skip(err)
	}
	cfg, err := Load(link, all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	now, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.FileInfo; got == nil || !os.SameFile(got, now) || got.Size() != now.Size() || !got.ModTime().Equal(now.ModTime()) {
		t.Fatalf("the loaded config's file %+v, want the one read, %+v", got, now)
	}
	skilltest.WriteFile(t, file, "repositories: []\nstrict: true\n")
	if now, err = os.Stat(file); err != nil {
		t.Fatal(err)
	}
	if cfg.FileInfo.Size() == now.Size() {
		t.Errorf("the loaded config's file has the size of the edited one")
	}
}

// TestConfigNotAFileOfSaneSize: a config that is no regular file, or
// past the size a config may have, is refused by name before it is read.
func TestConfigNotAFileOfSaneSize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	skilltest.WriteFile(t, big, "# "+strings.Repeat("x", maxConfigSize)+"\nrepositories: []\n")
	for _, tt := range []struct{ name, path, want string }{
		{"a folder", dir, "not a regular file but a directory: name the config file itself"},
		{"a file not there", filepath.Join(dir, "gone.yaml"), "write one there with skillsync init, or name the right file with --config"},
		{"a config too big", big, "more than the"},
	} {
		_, err := Load(tt.path, all.Kinds())
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: %v, want an error naming %s that says %q", tt.name, err, tt.path, tt.want)
		}
	}
}
