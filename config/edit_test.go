package config

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository/all"
	"github.com/skillsync/skillsync/repository/git"
)

// oldStarter is the starter of before targets: had a place in it: the
// file ends with its repositories, as most hand-written configs do.
const oldStarter = `# team config
workspace: .

strict: false
# Marketplace sources
repositories:
  - name: builtin
    embedded: builtin     # compiled in
  # - name: team
  #   dir: ../team-skills
`

// TestAppendAfterAddTarget is a bug init --agent had: it wrote
// targets: last, so the entry a person appends at the end of the file
// (where the repositories were) became a target: unknown key "name" in
// targets[1]. Targets now go above the repositories, which stay last.
func TestAppendAfterAddTarget(t *testing.T) {
	t.Parallel()
	// The old starter lists the built-in skills; the starter has them
	// commented out.
	for name, c := range map[string]struct {
		text    string
		sources int
	}{"old starter": {oldStarter, 2}, "starter": {Starter, 1}} {
		text := c.text
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, text)
			if added, err := AddTarget(hostenv.Env{}, path, ".claude/skills", all.Kinds()); err != nil || !added {
				t.Fatalf("AddTarget = %v, %v", added, err)
			}
			if added, err := AddTarget(hostenv.Env{}, path, "./.claude/skills/", all.Kinds()); err != nil || added {
				t.Fatalf("the same folder spelled differently was added again: %v, %v", added, err)
			}
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("  - name: team\n    git: https://example.com/acme/skills\n")
			f.Close()
			cfg, err := Load(path, all.Kinds())
			if err != nil {
				t.Fatalf("the config does not load after an entry was appended:\n%v\n%s", err, skilltest.ReadFile(t, path))
			}
			if len(cfg.Targets) != 1 || !strings.HasSuffix(cfg.Targets[0].Dir, ".claude/skills") || len(cfg.Sources) != c.sources || cfg.Sources[c.sources-1].Name != "team" {
				t.Errorf("targets %+v, sources %+v", cfg.Targets, cfg.Sources)
			}
		})
	}
	path := writeConfig(t, oldStarter)
	if _, err := AddTarget(hostenv.Env{}, path, ".claude/skills", all.Kinds()); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(oldStarter, "# Marketplace sources\n", "targets:\n  - dir: .claude/skills\n\n# Marketplace sources\n", 1)
	if got := skilltest.ReadFile(t, path); got != want {
		t.Errorf("AddTarget did more than add the target:\n%s\nwant:\n%s", got, want)
	}
}

func TestAddAgentsMD(t *testing.T) {
	path := writeConfig(t, Starter)
	if added, err := AddAgentsMD(hostenv.Env{}, path, "AGENTS.md", all.Kinds()); err != nil || !added {
		t.Fatalf("AddAgentsMD = %v, %v", added, err)
	}
	if added, err := AddAgentsMD(hostenv.Env{}, path, "./AGENTS.md", all.Kinds()); err != nil || added {
		t.Fatalf("the same file spelled differently was added again: %v, %v", added, err)
	}
	if added, err := AddTarget(hostenv.Env{}, path, ".claude/skills", all.Kinds()); err != nil || !added {
		t.Fatalf("AddTarget after AddAgentsMD = %v, %v", added, err)
	}
	cfg, err := Load(path, all.Kinds())
	if err != nil {
		t.Fatalf("%v\n%s", err, skilltest.ReadFile(t, path))
	}
	if len(cfg.AgentsMD) != 1 || cfg.AgentsMD[0].Path != filepath.Join(filepath.Dir(path), "AGENTS.md") || len(cfg.Targets) != 1 {
		t.Errorf("agents_md %+v, targets %+v", cfg.AgentsMD, cfg.Targets)
	}
	if got := skilltest.ReadFile(t, path); !strings.Contains(got, "targets:\n  - agents_md: AGENTS.md\n  - dir: .claude/skills\n") {
		t.Errorf("config:\n%s", got)
	}
}

func TestAddRepositoryKeepsTheText(t *testing.T) {
	t.Parallel()
	text := `# comment at the top

repositories:   # the sources
  - name: builtin
    embedded: builtin


  # an old one, commented out
  #- name: x

# targets below
targets:
  - dir: .claude/skills   # Claude Code

hidden: [a]
`
	path := writeConfig(t, text)
	res, err := AddRepository(hostenv.Env{}, path, Entry{Git: "https://github.com/acme/skills", Ref: "v1", Skills: []string{"pdf", "x: y"}}, all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Added || res.Source != "skills" || len(res.Config.Sources) != 2 {
		t.Errorf("res = %+v", res)
	}
	want := strings.Replace(text, "  #- name: x\n", `  #- name: x
  - name: skills
    git: https://github.com/acme/skills
    ref: v1
    skills: [pdf, 'x: y']
`, 1)
	if got := skilltest.ReadFile(t, path); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if s := res.Config.Sources[1]; !reflect.DeepEqual(s.Skills, []string{"pdf", "x: y"}) || s.Settings.(*git.Settings).Ref != "v1" {
		t.Errorf("the entry reads back as %+v", s)
	}

	// The same repository spelled another way is not added twice; with a
	// selection, the new names join the selection.
	for _, spelling := range []string{"https://GitHub.com/acme/skills.git", "git@github.com:acme/skills.git", "ssh://git@github.com/acme/skills/"} {
		res, err = AddRepository(hostenv.Env{}, path, Entry{Git: spelling, Ref: "v1", Skills: []string{"pdf"}}, all.Kinds())
		if err != nil || res.Added || res.Source != "skills" || len(res.Skills) != 0 {
			t.Errorf("%s: %+v, %v", spelling, res, err)
		}
	}
	before := skilltest.ReadFile(t, path)
	res, err = AddRepository(hostenv.Env{}, path, Entry{Git: "https://github.com/acme/skills", Ref: "v1", Skills: []string{"pdf", "docx"}}, all.Kinds())
	if err != nil || res.Added || !reflect.DeepEqual(res.Skills, []string{"docx"}) {
		t.Fatalf("adding a skill to the selection: %+v, %v", res, err)
	}
	if got := skilltest.ReadFile(t, path); got != strings.Replace(before, "[pdf, 'x: y']", "[pdf, 'x: y', docx]", 1) {
		t.Errorf("the selection was not extended in place:\n%s", got)
	}

	// Another ref is another source only with a name of its own
	// (TestAddRepositoryAtAnotherRef has the refusal without one).
	res, err = AddRepository(hostenv.Env{}, path, Entry{Name: "skills-v2", Git: "https://github.com/acme/skills", Ref: "v2"}, all.Kinds())
	if err != nil || !res.Added || res.Source != "skills-v2" {
		t.Errorf("another ref: %+v, %v", res, err)
	}
	res, err = AddRepository(hostenv.Env{}, path, Entry{Git: "https://github.com/acme/skills", Path: "more"}, all.Kinds())
	if err != nil || !res.Added || res.Source != "acme-skills" {
		t.Errorf("a third: %+v, %v", res, err)
	}
	if _, err := AddRepository(hostenv.Env{}, path, Entry{Name: "builtin", Git: "https://example.com/x"}, all.Kinds()); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("a taken --name: %v", err)
	}
}

func TestAddRepositoryShapes(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text, want string }{
		{"no key", "strict: true\n", "strict: true\n\nrepositories:\n  - name: r\n    git: file:///r\n"},
		{"empty flow", "repositories: [] # none yet\nstrict: true\n", "repositories: # none yet\n  - name: r\n    git: file:///r\nstrict: true\n"},
		{"dash at the key's column", "repositories:\n- embedded: builtin\nstrict: true\n", "repositories:\n- embedded: builtin\n- name: r\n  git: file:///r\nstrict: true\n"},
		{"deep indent", "repositories:\n    -   embedded: builtin\n", "repositories:\n    -   embedded: builtin\n    - name: r\n      git: file:///r\n"},
		{"crlf", "repositories:\r\n  - embedded: builtin\r\n", "repositories:\r\n  - embedded: builtin\r\n  - name: r\r\n    git: file:///r\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.text)
			if _, err := AddRepository(hostenv.Env{}, path, Entry{Git: "file:///r"}, all.Kinds()); err != nil {
				t.Fatal(err)
			}
			if got := skilltest.ReadFile(t, path); got != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
	path := writeConfig(t, "repositories: [{embedded: builtin}]\n")
	if _, err := AddRepository(hostenv.Env{}, path, Entry{Git: "file:///r"}, all.Kinds()); err == nil || !strings.Contains(err.Error(), "flow list") {
		t.Errorf("a flow list: %v", err)
	}
	broken := writeConfig(t, "repositories:\n  - nmae: x\n")
	if _, err := AddRepository(hostenv.Env{}, broken, Entry{Git: "file:///r"}, all.Kinds()); err == nil || skilltest.ReadFile(t, broken) != "repositories:\n  - nmae: x\n" {
		t.Errorf("a config that does not load was edited: %v", err)
	}
}

func TestEditRefusesALink(t *testing.T) {
	t.Parallel()
	real := writeConfig(t, "repositories: []\n")
	link := filepath.Join(t.TempDir(), FileName)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRepository(hostenv.Env{}, link, Entry{Git: "file:///r"}, all.Kinds()); err == nil || !strings.Contains(err.Error(), "edit the file it points to by hand (naming that file with --config would make its folder the workspace") {
		t.Errorf("an edit through a link: %v", err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 || skilltest.ReadFile(t, real) != "repositories: []\n" {
		t.Error("the link or its file changed")
	}
}

func TestAddRepositoryDir(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "repositories: []\n")
	base := filepath.Dir(path)
	if err := os.MkdirAll(filepath.Join(base, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := AddRepository(hostenv.Env{}, path, Entry{Dir: filepath.Join(base, "team")}, all.Kinds())
	if err != nil || !res.Added || res.Source != "team" {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := skilltest.ReadFile(t, path); got != "repositories:\n  - name: team\n    dir: team\n" {
		t.Errorf("got %q", got)
	}
	if res, err := AddRepository(hostenv.Env{}, path, Entry{Dir: filepath.Join(base, "team") + "/"}, all.Kinds()); err != nil || res.Added {
		t.Errorf("the same directory again: %+v, %v", res, err)
	}
}

func TestRemoveRepository(t *testing.T) {
	t.Parallel()
	text := `repositories:
  # the built-in ones
  - name: builtin
    embedded: builtin

  - name: team
    git: https://example.com/acme/team
    # pinned for the release
    ref: v1
    skills:
      - pdf
      - docx
  # - name: old
targets:
  - dir: .claude/skills
`
	path := writeConfig(t, text)
	if _, _, err := RemoveRepository(hostenv.Env{}, path, "nope", all.Kinds()); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "builtin, team") {
		t.Errorf("an unknown source: %v", err)
	}
	if _, err := RemoveSkill(hostenv.Env{}, path, "builtin", "pdf", all.Kinds()); err != nil {
		t.Errorf("a skill of a source without skills: %v", err)
	}
	withExclude := strings.Replace(text, "    embedded: builtin\n", "    embedded: builtin\n    exclude: [pdf]\n", 1)
	if got := skilltest.ReadFile(t, path); got != withExclude {
		t.Errorf("exclude a skill:\n%s\nwant:\n%s", got, withExclude)
	}
	if _, err := RemoveSkill(hostenv.Env{}, path, "builtin", "pdf", all.Kinds()); !errors.Is(err, ErrNotFound) {
		t.Errorf("a skill already excluded: %v", err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveSkill(hostenv.Env{}, path, "team", "xlsx", all.Kinds()); !errors.Is(err, ErrNotFound) {
		t.Errorf("a skill not selected: %v", err)
	}
	cfg, err := RemoveSkill(hostenv.Env{}, path, "team", "pdf", all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(text, "    skills:\n      - pdf\n      - docx\n", "    skills: [docx]\n", 1)
	if got := skilltest.ReadFile(t, path); got != want {
		t.Errorf("remove a skill:\n%s\nwant:\n%s", got, want)
	}
	if !reflect.DeepEqual(cfg.Sources[1].Skills, []string{"docx"}) {
		t.Errorf("skills = %v", cfg.Sources[1].Skills)
	}
	if _, err := RemoveSkill(hostenv.Env{}, path, "team", "docx", all.Kinds()); err == nil || !strings.Contains(err.Error(), "remove the source instead") {
		t.Errorf("removing the last selected skill: %v", err)
	}

	src, cfg, err := RemoveRepository(hostenv.Env{}, path, "team", all.Kinds())
	if err != nil || src.Name != "team" || len(cfg.Sources) != 1 {
		t.Fatalf("remove team: %+v %v", src, err)
	}
	want = `repositories:
  # the built-in ones
  - name: builtin
    embedded: builtin

  # - name: old
targets:
  - dir: .claude/skills
`
	if got := skilltest.ReadFile(t, path); got != want {
		t.Errorf("remove team:\n%s\nwant:\n%s", got, want)
	}
	if _, _, err := RemoveRepository(hostenv.Env{}, path, "builtin", all.Kinds()); err != nil {
		t.Fatal(err)
	}
	if got := skilltest.ReadFile(t, path); !strings.HasPrefix(got, "repositories: []\n  # the built-in ones\n\n  # - name: old\ntargets:") {
		t.Errorf("remove the last source:\n%s", got)
	}
}

func TestParseSource(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	home := t.TempDir()
	env := hostenv.New(cwd, []string{"HOME=" + home})
	if err := os.Mkdir(filepath.Join(cwd, "team-skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	host := "https://git.example.com/"
	tests := []struct {
		arg  string
		want Entry
	}{
		{"acme/skills", Entry{Git: host + "acme/skills"}},
		{"acme/skills.git", Entry{Git: host + "acme/skills"}},
		{"acme/skills@v1.2", Entry{Git: host + "acme/skills", Ref: "v1.2"}},
		{"acme/skills/tools/pdf@main", Entry{Git: host + "acme/skills", Ref: "main", Path: "tools/pdf"}},
		{"https://github.com/acme/skills", Entry{Git: "https://github.com/acme/skills"}},
		{"https://github.com/acme/skills.git", Entry{Git: "https://github.com/acme/skills.git"}},
		{"https://github.com/acme/skills/tree/main/skills/pdf", Entry{Git: "https://github.com/acme/skills", Ref: "main", Path: "skills/pdf"}},
		{"https://github.com/acme/skills/tree/v2", Entry{Git: "https://github.com/acme/skills", Ref: "v2"}},
		{"https://github.com/acme/skills/blob/main/skills/pdf/SKILL.md", Entry{Git: "https://github.com/acme/skills", Ref: "main", Path: "skills/pdf"}},
		{"https://gitlab.com/g/sub/repo/-/tree/dev/skills", Entry{Git: "https://gitlab.com/g/sub/repo", Ref: "dev", Path: "skills"}},
		{"http://127.0.0.1:8080/acme/skills/tree/main/x", Entry{Git: "http://127.0.0.1:8080/acme/skills", Ref: "main", Path: "x"}},
		{"git@github.com:acme/skills.git", Entry{Git: "git@github.com:acme/skills.git"}},
		{"ssh://git@host:2222/acme/skills.git", Entry{Git: "ssh://git@host:2222/acme/skills.git"}},
		{"file:///srv/git/skills", Entry{Git: "file:///srv/git/skills"}},
		{"file:///srv/git/team@v2", Entry{Git: "file:///srv/git/team", Ref: "v2"}},
		{"https://github.com/acme/skills@v2", Entry{Git: "https://github.com/acme/skills", Ref: "v2"}},
		{"https://github.com/acme/skills.git@release/v2", Entry{Git: "https://github.com/acme/skills.git", Ref: "release/v2"}},
		{"git@github.com:acme/skills.git@v2", Entry{Git: "git@github.com:acme/skills.git", Ref: "v2"}},
		{"ssh://git@host:2222/acme/skills.git@main", Entry{Git: "ssh://git@host:2222/acme/skills.git", Ref: "main"}},
		{"./team-skills", Entry{Dir: filepath.Join(cwd, "team-skills")}},
		{"team-skills", Entry{Dir: filepath.Join(cwd, "team-skills")}},
		{"../x", Entry{Dir: filepath.Join(filepath.Dir(cwd), "x")}},
		{"~/skills", Entry{Dir: filepath.Join(home, "skills")}},
		{"/abs/dir", Entry{Dir: "/abs/dir"}},
	}
	for _, tt := range tests {
		got, err := ParseSource(env, tt.arg, host)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseSource(%q) = %+v, %v; want %+v", tt.arg, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "nosuchdir", "a/b/../../etc", "https://github.com/a/b/tree/main/../x", "a\nb/c"} {
		if got, err := ParseSource(env, bad, host); err == nil {
			t.Errorf("ParseSource(%q) = %+v, want an error", bad, got)
		}
	}
	// A credential in a source would be written into a config that is
	// committed and shared: refused, and never repeated in the message.
	for _, secret := range []string{"https://x-access-token:s3cret@github.com/a/b", "https://s3cret@github.com/a/b/tree/main/x",
		"ssh://git:s3cret@host/a/b", "git:s3cret@host:a/b", "HTTP://s3cret@host/a"} {
		_, err := ParseSource(env, secret, host)
		if err == nil || !strings.Contains(err.Error(), "credentials") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseSource(%q): %v", secret, err)
		}
	}
	if _, err := ParseSource(env, "ssh://git@host/a/b", host); err != nil {
		t.Errorf("an ssh user name is no secret: %v", err)
	}
	// A bare repository is a git source, not a folder of files.
	bare := filepath.Join(cwd, "team.git")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(bare, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ParseSource(env, "./team.git", host); err != nil || got.Git != "file://"+filepath.ToSlash(bare) || got.Dir != "" {
		t.Errorf("ParseSource of a bare repository = %+v, %v", got, err)
	}
	// A URL without its scheme is not owner/repo/path.
	if _, err := ParseSource(env, "github.com/acme/third", host); err == nil || !strings.Contains(err.Error(), "write https://github.com/acme/third") {
		t.Errorf("ParseSource of a URL without its scheme: %v", err)
	}
	// A password net/url cannot parse is a credential too.
	for _, secret := range []string{"https://user:s3cret/x@127.0.0.1:1/x.git", "https://user:s3c#ret@host/x", "https://user:s3c ret@host/x"} {
		_, err := ParseSource(env, secret, host)
		if err == nil || !strings.Contains(err.Error(), "credentials") || strings.Contains(err.Error(), "s3c") {
			t.Errorf("ParseSource(%q): %v", secret, err)
		}
	}
}

// Every error of ParseSource and GitHost hides the credentials of the
// argument, wherever they are in it.
func TestParseSourceErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	const host = "https://github.com/"
	for _, arg := range []string{
		"https://github.com/a/b/tree/main/../x#s3cret", // leaves the repository
		"https://host/x.git?access_token=s3cret\nmore", // a control character
		"https://host/x.git#s3cret\x00",
		"https://u:s3cret/x@host/x.git\rmore",
		"https://[bad?access_token=s3cret", // not a URL
		"https://[bad#s3cret",
		"nosuch?access_token=s3cret", // not a source
	} {
		_, err := ParseSource(hostenv.Env{}, arg, host)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseSource(%q): %v", arg, err)
		}
	}
	for _, h := range []string{"https://host/?access_token=s3cret", "https://host/#s3cret"} {
		if _, err := GitHost(hostenv.New("/", []string{"SKILLSYNC_GIT_HOST=" + h}), ""); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("GitHost(%q): %v", h, err)
		}
	}
}

func TestGitHost(t *testing.T) {
	t.Parallel()
	hostIs := func(h string) hostenv.Env { return hostenv.New("/", []string{"SKILLSYNC_GIT_HOST=" + h}) }
	for _, tt := range []struct{ env, configured, want string }{
		{"", "", "https://github.com/"},
		{"", "gitlab.example.com", "https://gitlab.example.com/"},
		{"http://127.0.0.1:99", "gitlab.example.com", "http://127.0.0.1:99/"},
		{"https://git.example.com/mirror/", "", "https://git.example.com/mirror/"},
	} {
		if got, err := GitHost(hostIs(tt.env), tt.configured); err != nil || got != tt.want {
			t.Errorf("GitHost(env %q, config %q) = %q, %v; want %q", tt.env, tt.configured, got, err, tt.want)
		}
	}
	if _, err := GitHost(hostIs("ftp://x"), ""); err == nil {
		t.Error("an ftp host was taken")
	}
	cfg, err := Load(writeConfig(t, "default_git_host: https://git.example.com/\n"), all.Kinds())
	if err != nil || cfg.DefaultGitHost != "https://git.example.com/" {
		t.Errorf("default_git_host: %+v, %v", cfg, err)
	}
}

func TestSkillsAndExcludeLoad(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "repositories:\n  - embedded: builtin\n    skills: [a, 'pdf-*']\n    exclude:\n      - c\n"), all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Sources[0]; !reflect.DeepEqual(s.Skills, []string{"a", "pdf-*"}) || !reflect.DeepEqual(s.Exclude, []string{"c"}) {
		t.Errorf("source = %+v", s)
	}
}

// A configured remote whose password net/url cannot parse (allowed with
// allow_inline_credentials) is compared and named without a panic and
// without any piece of the password.
func TestRemoteKeyWithUnparsablePassword(t *testing.T) {
	t.Parallel()
	for _, remote := range []string{"https://user:S3/x@host/acme/skills.git", "https://user:S3@x@host/acme/skills.git", "user:S3/x@host:acme/skills.git"} {
		if got := remoteKey(remote); got != "host/acme/skills" {
			t.Errorf("remoteKey(%q) = %q, want host/acme/skills", remote, got)
		}
		if got := ownerOf(remote); got != "acme" {
			t.Errorf("ownerOf(%q) = %q, want acme", remote, got)
		}
	}
}

// TestRemoteKeyPorts: an HTTP server on another port of one host is
// another remote; an SSH port names the same server's repository as its
// HTTPS address does.
func TestRemoteKeyPorts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://127.0.0.1:19480/x.git", "https://127.0.0.1:1/x.git", false},
		{"https://git.example.com:8443/acme/x", "https://git.example.com/acme/x", false},
		{"ssh://git@git.example.com:2222/acme/x.git", "https://git.example.com/acme/x", true},
		{"https://GitHub.com/Acme/X", "git@github.com:acme/x.git", true},
		// The scheme's own port, spelled out, is the same server.
		{"https://github.com:443/acme/x", "git@github.com:acme/x.git", true},
		{"http://git.example.com:80/acme/x", "https://git.example.com/acme/x", true},
	} {
		if same := remoteKey(tc.a) == remoteKey(tc.b); same != tc.same {
			t.Errorf("%s and %s: same remote %v (%q, %q), want %v", tc.a, tc.b, same, remoteKey(tc.a), remoteKey(tc.b), tc.same)
		}
	}
}

// TestRemoveSkillAppendsToExclude: a source with an exclude: list and no
// skills: gets the skill added to that list; the comments stay.
func TestRemoveSkillAppendsToExclude(t *testing.T) {
	t.Parallel()
	text := "repositories:\n  - name: team # ours\n    git: https://example.com/acme/team\n    exclude:\n      - old # gone\n    # after\ntargets:\n  - dir: .claude/skills\n"
	path := writeConfig(t, text)
	cfg, err := RemoveSkill(hostenv.Env{}, path, "team", "pdf", all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Sources[0].Exclude, []string{"old", "pdf"}) {
		t.Errorf("exclude = %v", cfg.Sources[0].Exclude)
	}
	got := skilltest.ReadFile(t, path)
	if !strings.Contains(got, "  - name: team # ours\n") || !strings.Contains(got, "    # after\n") || !strings.Contains(got, "exclude: [old, pdf]") {
		t.Errorf("config:\n%s", got)
	}
}

// TestAddRepositoryDirBelowHome: a folder far from the config but below
// the home folder is written as ~/..., which loads back to it for every
// user who keeps it there, where an absolute path names one user's home.
func TestAddRepositoryDirBelowHome(t *testing.T) {
	// The process's home: a dir entry's ~ is expanded by its kind, from
	// the process's environment.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	ws := filepath.Join(home, "work", "projects", "app")
	team := filepath.Join(home, "my skills")
	for _, d := range []string{ws, filepath.Join(team, "pdf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(ws, FileName)
	if err := os.WriteFile(path, []byte("repositories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := hostenv.Env{Dir: ws}
	if _, err := AddRepository(env, path, Entry{Dir: team}, all.Kinds()); err != nil {
		t.Fatal(err)
	}
	if got := skilltest.ReadFile(t, path); !strings.Contains(got, "dir: ~/my skills\n") {
		t.Errorf("config:\n%s", got)
	}
	cfg, err := LoadIn(env, path, all.Kinds())
	if err != nil || len(cfg.Sources) != 1 {
		t.Fatalf("load: %v", err)
	}
	if d, ok := cfg.Sources[0].Settings.(Directory); !ok || d.Directory() != team {
		t.Errorf("the entry loads back as %+v, want %s", cfg.Sources[0].Settings, team)
	}
}
