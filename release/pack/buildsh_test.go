package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildShReleasesOnlyACleanCheckoutOfTheTag runs release/build.sh in
// a throw-away repository that holds only the script: a release of a tag
// that is not HEAD, or of a changed checkout, would ship binaries whose
// `skillsync version` names a source they were not built from, and the
// script must refuse before it builds anything.
func TestBuildShReleasesOnlyACleanCheckoutOfTheTag(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	script, err := os.ReadFile(filepath.Join("..", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	repo, home := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"DIST=dist", "SOURCE_DATE_EPOCH=")
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = repo, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	git := func(args ...string) {
		t.Helper()
		if out, err := run("git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(repo, "release"), 0o755)
	os.WriteFile(filepath.Join(repo, "release", "build.sh"), script, 0o755)
	os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("/dist/\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o644)
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "one")

	// build runs the script and says whether it got past its checks:
	// dist/ is made only then (the build itself fails here, as the
	// repository has no Go module).
	build := func(arg string) (string, bool) {
		t.Helper()
		os.RemoveAll(filepath.Join(repo, "dist"))
		out, err := run("bash", "release/build.sh", arg)
		_, statErr := os.Stat(filepath.Join(repo, "dist"))
		if statErr != nil && err == nil {
			t.Fatalf("build.sh %s succeeded without a dist/:\n%s", arg, out)
		}
		return out, statErr == nil
	}

	if out, started := build("v9.9.9"); started || !strings.Contains(out, "no tag v9.9.9") {
		t.Errorf("a release of a tag that does not exist started:\n%s", out)
	}
	git("tag", "v9.9.9")
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	if out, started := build("v9.9.9"); started || !strings.Contains(out, "changes not in tag v9.9.9") {
		t.Errorf("a release of a changed checkout started:\n%s", out)
	}
	git("commit", "-q", "-am", "two")
	if out, started := build("v9.9.9"); started || !strings.Contains(out, "HEAD is not tag v9.9.9") {
		t.Errorf("a release of a commit after the tag started:\n%s", out)
	}
	os.WriteFile(filepath.Join(repo, "extra.go"), []byte("package main\n"), 0o644)
	if out, started := build("--snapshot"); !started || !strings.Contains(out, ".dirty") {
		t.Errorf("a snapshot of a checkout with an untracked file does not say it is changed:\n%s", out)
	}
	os.Remove(filepath.Join(repo, "extra.go"))
	if out, started := build("--snapshot"); !started || strings.Contains(out, ".dirty") {
		t.Errorf("a snapshot of a clean checkout did not start or says it is changed:\n%s", out)
	}
	git("checkout", "-q", "v9.9.9")
	if out, started := build("v9.9.9"); !started {
		t.Errorf("a release of a clean checkout of its tag was refused:\n%s", out)
	}
}

// TestBuildShWritesNoPointerWithoutItsArchives runs release/build.sh
// --snapshot on a throw-away module that holds the script, pack and a
// small program in skillsync's place: with TARGETS leaving archives out,
// no Homebrew formula or Scoop manifest is written (one would point at
// archives that do not exist, with empty hashes), and the script's own
// checks pass. .ci/run's snapshot builds all five, with both.
func TestBuildShWritesNoPointerWithoutItsArchives(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "git", "go", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	repo, home := t.TempDir(), t.TempDir()
	files := map[string]string{
		"go.mod":     "module github.com/skillsync/skillsync\n\ngo 1.26.0\n",
		".gitignore": "/dist/\n",
		"README.md":  "readme\n",
		"cmd/skillsync/main.go": `package main

import (
	"fmt"
	"runtime"
)

var version, commit string

func main() {
	fmt.Printf("skillsync %s (commit %s, %s %s/%s)\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
`,
	}
	for _, name := range []string{"build.sh", "pack/main.go", "pack/checkbuild.go"} {
		data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		files["release/"+name] = string(data)
	}
	for name, data := range files {
		path := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run := func(extra []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = repo, append(env, extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "one"}} {
		if out, err := run(nil, "git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	dist := filepath.Join(repo, "dist")
	out, err := run([]string{"TARGETS=linux/amd64", "DIST=" + dist}, "bash", "release/build.sh", "--snapshot")
	if err != nil || !strings.Contains(out, "snapshot: ok") {
		t.Fatalf("TARGETS=linux/amd64: %v\n%s", err, out)
	}
	if archives, _ := filepath.Glob(filepath.Join(dist, "skillsync_*")); len(archives) != 1 {
		t.Errorf("archives %q, want the one of linux/amd64", archives)
	}
	for _, pointer := range []string{"skillsync.rb", "skillsync.json"} {
		if _, err := os.Stat(filepath.Join(dist, pointer)); err == nil {
			t.Errorf("%s written for the archive of linux/amd64 alone", pointer)
		}
	}
}
