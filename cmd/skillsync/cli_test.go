package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/buildtest"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/testmain"
)

// pkgDir is the package's directory, which relative test directories
// are taken from.
var pkgDir string

func TestMain(m *testing.M) {
	testmain.Setup()
	var err error
	if pkgDir, err = os.Getwd(); err != nil {
		panic(err)
	}
	code := m.Run()
	pgCluster.Close()
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// homes gives each test one home directory, so the git stores one command
// fetches are there for the next.
var homes sync.Map

func home(t *testing.T) string {
	h, ok := homes.Load(t)
	if !ok {
		h = t.TempDir()
		homes.Store(t, h)
	}
	return h.(string)
}

// environ is the clean environment a command runs in: the test's home
// and its XDG folders, no SKILLSYNC_CONFIG; extra adds KEY=VALUE pairs.
func environ(t *testing.T, extra []string) []string {
	h := home(t)
	return append([]string{"HOME=" + h, "XDG_CONFIG_HOME=" + filepath.Join(h, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(h, ".cache"), "SKILLSYNC_CONFIG=", "SKILLSYNC_GIT_HOST=http://127.0.0.1:1/", "PATH=" + os.Getenv("PATH")}, extra...)
}

// run runs skillsync in-process, in dir, with a clean environment.
func run(t *testing.T, dir string, args ...string) result {
	return runEnv(t, dir, nil, args...)
}

// runEnv is run with extra variables in the environment for this one
// command.
func runEnv(t *testing.T, dir string, extra []string, args ...string) result {
	t.Helper()
	return runIn(t, dir, extra, "", args...)
}

// runIn is runEnv with stdin.
func runIn(t *testing.T, dir string, extra []string, stdin string, args ...string) result {
	t.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(pkgDir, dir)
	}
	var out, errb bytes.Buffer
	code := execute(factory{env: hostenv.New(dir, environ(t, extra)), stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}, args)
	return result{out.String(), errb.String(), code}
}

// skillsyncBinary is the skillsync the tests that need real processes
// (signals, many processes at once) run, built once and without -race
// (internal/buildtest says why).
var skillsyncBinary = buildtest.New("github.com/skillsync/skillsync/cmd/skillsync")

// binary builds skillsync once and returns its path.
func binary(t testing.TB) string {
	t.Helper()
	return skillsyncBinary.Path(t)
}

// runProcess runs the built binary in dir as its own process.
func runProcess(t *testing.T, dir string, extra []string, args ...string) result {
	t.Helper()
	return runProcessIn(t, dir, extra, "", args...)
}

// runProcessIn is runProcess with stdin.
func runProcessIn(t *testing.T, dir string, extra []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = environ(t, extra)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// runCmd runs cmd and returns what it printed and its exit status.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// startServer runs skillsync with args (serve or mcp --http on port 0) in
// dir as its own process, and returns what the first stderr line
// matching ready captures: where it serves. The server gets SIGTERM at the
// end of the test and must exit 0 within 30 s.
func startServer(t *testing.T, dir string, ready *regexp.Regexp, args ...string) string {
	t.Helper()
	name := "skillsync " + strings.Join(args, " ")
	cmd, _ := command(t, dir, args...)
	cmd.Stderr = nil
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var addr string
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if m := ready.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s did not say where it serves:\n%s", name, strings.Join(seen, "\n"))
	}
	go io.Copy(io.Discard, stderr) // keep the pipe drained
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s did not exit 0 on SIGTERM: %v", name, err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("%s did not stop on SIGTERM", name)
		}
	})
	return addr
}

// workspace copies testdata/workspace into a temporary directory.
func workspace(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("..", "..", "testdata", "workspace")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, dst, "sync"); r.code != 0 {
		t.Fatalf("sync the workspace: %d %s", r.code, r.stderr)
	}
	return dst
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not the JSON expected: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return v
}

func TestListLayers(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	r := run(t, ws, "list", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type entry struct {
		Name, Layer, Source, Path string
		Shadowed                  []struct{ Layer, Source, Path string }
	}
	got := map[string]entry{}
	var order []string
	for _, e := range decode[[]entry](t, r) {
		got[e.Name] = e
		order = append(order, e.Name)
	}
	if strings.Join(order, " ") != "manual pdf release-notes skillsync writing-skills" {
		t.Errorf("names = %v (hidden-one must be left out, broken skipped)", order)
	}
	if pdf := got["pdf"]; pdf.Layer != "user" || len(pdf.Shadowed) != 2 || pdf.Shadowed[0].Layer != "workspace" || pdf.Shadowed[1].Source != "team" {
		t.Errorf("pdf = %+v", pdf)
	}
	if rn := got["release-notes"]; rn.Layer != "marketplace" || rn.Source != "team" || rn.Shadowed[0].Layer != "global" {
		t.Errorf("release-notes = %+v", rn)
	}
	if !strings.Contains(r.stderr, "broken") || !strings.Contains(r.stderr, "description-missing") {
		t.Errorf("the broken skill is not reported on stderr: %s", r.stderr)
	}
	all := decode[[]entry](t, run(t, ws, "list", "--all", "--json"))
	if len(all) != 6 {
		t.Errorf("list --all gave %d skills, want 6 with hidden-one", len(all))
	}
	human := run(t, ws, "list")
	if !strings.Contains(human.stdout, "NAME") || !strings.Contains(human.stdout, "release-notes   marketplace") {
		t.Errorf("human list:\n%s", human.stdout)
	}
}

func TestShowAndRead(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	r := run(t, ws, "show", "release-notes")
	for _, want := range []string{"Name:          release-notes", "Source:        team", "scripts/draft.sh", "marketplace layer wins over the global layer"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	js := decode[struct {
		Files []struct{ Path, Mode string }
	}](t, run(t, ws, "show", "--json", "release-notes"))
	if len(js.Files) != 2 || js.Files[1].Path != "scripts/draft.sh" || js.Files[1].Mode != "0755" {
		t.Errorf("show --json files = %+v", js.Files)
	}
	if r := run(t, ws, "read", "PDF"); r.code != 0 || !strings.Contains(r.stdout, "# Alice pdf") {
		t.Errorf("read PDF: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "read", "release-notes", "scripts/draft.sh"); r.stdout != "#!/bin/sh\necho notes\n" {
		t.Errorf("read a file: %q %s", r.stdout, r.stderr)
	}
	if r := run(t, ws, "read", "pfd"); r.code != 1 || !strings.Contains(r.stderr, "did you mean pdf") {
		t.Errorf("unknown name: %d %s", r.code, r.stderr)
	}
	// --json: the file's text, or its bytes in base64 when not UTF-8.
	text := decode[struct {
		Name, File    string
		Content       *string
		ContentBase64 string `json:"content_base64"`
	}](t, run(t, ws, "read", "--json", "release-notes", "scripts/draft.sh"))
	if text.Name != "release-notes" || text.File != "scripts/draft.sh" || text.Content == nil || *text.Content != "#!/bin/sh\necho notes\n" || text.ContentBase64 != "" {
		t.Errorf("read --json of a script = %+v", text)
	}
	writeTree(t, ws, map[string]string{"skills/pixels/SKILL.md": "---\nname: pixels\ndescription: Pixels.\n---\n", "skills/pixels/logo.bin": "\x00\xff\x01"})
	binary := decode[struct {
		Content       *string
		ContentBase64 string `json:"content_base64"`
	}](t, run(t, ws, "read", "--json", "pixels", "logo.bin"))
	if binary.Content != nil || binary.ContentBase64 != "AP8B" {
		t.Errorf("read --json of bytes that are not UTF-8 = %+v", binary)
	}
}

func TestReadRefusesEscapes(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	// Links planted in the cache, where read takes the skill from: read
	// still never leaves the skill.
	skillDir := filepath.Join(ws, ".skills-cache", "team", "release-notes")
	if err := os.Symlink(filepath.Join(ws, "skillsync.yaml"), filepath.Join(skillDir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("scripts/draft.sh", filepath.Join(skillDir, "in.sh")); err != nil {
		t.Fatal(err)
	}
	// A path that leaves the skill by its form is bad usage (exit 2), for
	// any skill name; one the skill's files refuse or lack is a failure.
	for _, c := range []struct {
		skill, file, want string
		code              int
	}{
		{"release-notes", "../pdf/SKILL.md", "leads out of the skill", 2},
		{"release-notes", "scripts/../../x", "leads out of the skill", 2},
		{"release-notes", "/etc/passwd", "absolute paths are refused", 2},
		{"no-such-skill", "../x", "leads out of the skill", 2},
		{"release-notes", "out.txt", "symbolic link leads out of the skill", 1},
		{"release-notes", "missing.md", "no such file", 1},
		{"release-notes", "scripts", "is a directory", 1},
	} {
		r := run(t, ws, "read", c.skill, c.file)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("read %s %s: exit %d, stderr %q, stdout %q; want %d, %q", c.skill, c.file, r.code, r.stderr, r.stdout, c.code, c.want)
		}
	}
	if r := run(t, ws, "read", "release-notes", "in.sh"); r.code != 0 || !strings.Contains(r.stdout, "echo notes") {
		t.Errorf("a link inside the skill: %d %s", r.code, r.stderr)
	}
}

func TestSearchAndPrompt(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	res := decode[[]struct {
		Name  string
		Score int
	}](t, run(t, ws, "search", "--json", "release", "notes"))
	if len(res) == 0 || res[0].Name != "release-notes" || res[0].Score != 31 {
		t.Errorf("search = %+v", res)
	}
	if r := run(t, ws, "search", "hidden-one"); strings.Contains(r.stdout, "hidden-one") {
		t.Errorf("a hidden skill was found: %s", r.stdout)
	}
	p := run(t, ws, "prompt")
	if strings.Contains(p.stdout, "<name>\nmanual\n</name>") || strings.Contains(p.stdout, "hidden-one") {
		t.Errorf("prompt shows a disable-model-invocation or hidden skill:\n%s", p.stdout)
	}
	want := "<location>\n" + filepath.Join(ws, "alice", "skills", "pdf", "SKILL.md") + "\n</location>"
	if !strings.Contains(p.stdout, want) {
		t.Errorf("prompt lacks %q:\n%s", want, p.stdout)
	}
	if r := run(t, ws, "prompt", "--max-chars", "300"); len([]rune(r.stdout)) > 300 || !strings.Contains(r.stdout, "more skills: skillsync search QUERY") {
		t.Errorf("prompt --max-chars 300:\n%s", r.stdout)
	}
	if r := run(t, ws, "prompt", "--format", "yaml"); r.code != 2 {
		t.Errorf("a bad --format exits %d, want 2", r.code)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "validate")
	r := run(t, ".", "validate", filepath.Join(dir, "good"))
	if r.code != 0 || r.stdout != "" {
		t.Errorf("good: %d %q", r.code, r.stdout)
	}
	r = run(t, ".", "validate", dir)
	want := filepath.Join(dir, "warned", "SKILL.md") + ":2: warning: "
	if r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "(name-not-lowercase)") {
		t.Errorf("warnings alone exit 0 and print PATH:LINE: LEVEL: MESSAGE (RULE): %d\n%s", r.code, r.stdout)
	}
	if r = run(t, ".", "validate", "--strict", dir); r.code != 1 {
		t.Errorf("--strict with warnings exits %d, want 1", r.code)
	}
	type vr struct {
		Path, Name string
		Valid      bool
		Problems   []struct {
			Level, Rule, Message, File string
			Line                       int
		}
	}
	got := decode[[]vr](t, run(t, ".", "validate", "--json", filepath.Join("..", "..", "testdata", "workspace", "skills", "broken", "SKILL.md")))
	if len(got) != 1 || got[0].Valid || got[0].Problems[0].Rule != "description-missing" {
		t.Errorf("broken: %+v", got)
	}
	if r := run(t, ".", "validate", "--strict", filepath.Join("..", "..", "builtin")); r.code != 0 {
		t.Errorf("the built-in skills fail validate --strict:\n%s%s", r.stdout, r.stderr)
	}
	if r := run(t, ".", "validate"); r.code != 2 {
		t.Errorf("validate without a path exits %d, want 2", r.code)
	}
}

func TestDefaultConfigAndInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := run(t, dir, "list", "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "source builtin is not synced yet: run skillsync sync") {
		t.Fatalf("no config, before a sync: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("list wrote into an empty directory: %v", entries)
	}
	if r := run(t, dir, "sync"); r.code != 0 {
		t.Fatalf("sync on the default: %d %s", r.code, r.stderr)
	}
	r = run(t, dir, "list", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"source": "builtin"`) {
		t.Fatalf("no config: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, dir, "init"); r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	// Run again, it has nothing to do and says so: a setup script may run
	// it twice. (It exited 1, while init --agent did not.)
	before, _ := os.ReadFile(filepath.Join(dir, "skillsync.yaml"))
	if r := run(t, dir, "init"); r.code != 0 || !strings.Contains(r.stdout, "is there already, left as it is") ||
		readFile(t, filepath.Join(dir, "skillsync.yaml")) != string(before) {
		t.Errorf("init over an existing config: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, dir, "list"); r.code != 0 {
		t.Errorf("list with the starter config: %d %s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "skillsync.yaml"), []byte("repositories:\n  - name: x\n    dri: y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, dir, "list")
	if r.code != 2 || !strings.Contains(r.stderr, "skillsync.yaml:3: unknown key \"dri\"") {
		t.Errorf("bad config: exit %d, %s", r.code, r.stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"nope"}, {"list", "--nope"}, {"show"}, {"read", "a", "b", "c"}} {
		if r := run(t, t.TempDir(), args...); r.code != 2 {
			t.Errorf("%v exits %d, want 2: %s", args, r.code, r.stderr)
		}
	}
	if r := run(t, t.TempDir(), "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "skillsync ") {
		t.Errorf("version: %d %s", r.code, r.stdout)
	}
}
