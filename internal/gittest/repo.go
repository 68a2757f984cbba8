// Package gittest builds real git repositories for tests and serves them
// over file://, smart HTTP (git http-backend behind net/http/cgi) and SSH
// (OpenSSH's sshd), all on this machine.
package gittest

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// Repo is a git repository with a work tree, made with the git command.
type Repo struct {
	t   testing.TB
	Dir string
}

// NewRepo makes an empty repository whose first branch is branch.
func NewRepo(t testing.TB, branch string) *Repo {
	t.Helper()
	return NewRepoIn(t, t.TempDir(), branch)
}

// NewRepoIn is NewRepo in dir, an empty folder that may outlive t: a
// test whose subtests read the same repository makes it in a folder of
// its own and builds it in the first subtest that needs it, which its
// failures then fail.
func NewRepoIn(t testing.TB, dir, branch string) *Repo {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: the git tests need it to build repositories")
	}
	r := &Repo{t: t, Dir: dir}
	// The template is shared through the temporary folder only where no
	// other user can write it: one planted there could carry hooks that
	// every test's git would run.
	if !plainBranch(branch) || !platform.PrivateDir(os.TempDir()) {
		r.Git("init", "-q", "-b", branch)
		r.configure()
		return r
	}
	// A copy of an empty repository git init made once, with its first
	// branch named: what git init -b would leave, without the process
	// (a git process costs a race-built test 15 to 20 ms of CPU on the
	// project's machine, and the suite makes hundreds of repositories).
	tmpl, err := emptyRepo(git)
	if err == nil {
		err = os.CopyFS(filepath.Join(r.Dir, ".git"), os.DirFS(tmpl))
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(r.Dir, ".git", "HEAD"), []byte("ref: refs/heads/"+branch+"\n"), 0o644)
	}
	if err != nil {
		t.Fatalf("make the repository %s: %v", r.Dir, err)
	}
	return r
}

// settings are what every test repository has in .git/config, written
// as git config would write them, in one append instead of five git
// processes. uploadpack.allowReachableSHA1InWant lets a client fetch a
// commit by its hash, as hosting services do. maintenance.auto and
// receive.autogc off: every git commit started a git maintenance run
// --auto (and a push a git gc --auto) that found nothing to do in
// repositories this small; a test that wants its repository packed runs
// git gc itself.
const settings = "[user]\n\tname = Test\n\temail = test@example.com\n" +
	"[commit]\n\tgpgsign = false\n" +
	"[uploadpack]\n\tallowReachableSHA1InWant = true\n" +
	"[maintenance]\n\tauto = false\n" +
	"[receive]\n\tautogc = false\n"

// configure appends settings to the repository's .git/config.
func (r *Repo) configure() {
	r.t.Helper()
	if err := appendSettings(filepath.Join(r.Dir, ".git", "config")); err != nil {
		r.t.Fatalf("configure the repository %s: %v", r.Dir, err)
	}
}

func appendSettings(config string) error {
	f, err := os.OpenFile(config, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(settings)
	return errors.Join(err, f.Close())
}

// plainBranch reports whether branch is a name git init -b takes as it
// is (letters, digits, '.', '_', '-' and inner '/', no ".."), so that
// writing it into HEAD is what git init would do; NewRepo leaves any
// other name to git init.
func plainBranch(branch string) bool {
	if branch == "" || strings.Contains(branch, "..") || strings.Contains(branch, "//") ||
		strings.HasPrefix(branch, "/") || strings.HasPrefix(branch, "-") || strings.HasPrefix(branch, ".") ||
		strings.HasSuffix(branch, "/") || strings.HasSuffix(branch, ".") || strings.HasSuffix(branch, ".lock") {
		return false
	}
	for _, c := range branch {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && !strings.ContainsRune("._-/", c) {
			return false
		}
	}
	return true
}

// emptyRepo returns the .git folder of an empty repository, made by git
// init and configured with settings, that NewRepo copies. It lives in
// the temporary folder, named for the git binary that made it, so the
// test binaries of a run, and the next runs, share it; it is made in a
// folder of its own and renamed into place whole, so where the name
// exists it is complete. git init runs with no global or system
// configuration (an init.templateDir of the user's would otherwise
// decide what every package's repositories hold).
func emptyRepo(git string) (string, error) {
	info, err := os.Stat(git)
	if err != nil {
		return "", err
	}
	key := fnv.New64a()
	fmt.Fprintf(key, "%s\n%s\n%d\n%d\n%d", templateVersion, git, info.Size(), info.ModTime().UnixNano(), os.Geteuid())
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("skillsync-gittest-template-%016x", key.Sum64()))
	if _, err := os.Stat(filepath.Join(dir, ".git", "HEAD")); err == nil {
		return filepath.Join(dir, ".git"), nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "skillsync-gittest-template-new-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // nothing left after the rename
	cmd := exec.Command(git, "init", "-q")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git init: %v\n%s", err, out)
	}
	if err := appendSettings(filepath.Join(tmp, ".git", "config")); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test binary renamed its template into place first.
		if _, err2 := os.Stat(filepath.Join(dir, ".git", "HEAD")); err2 != nil {
			return "", fmt.Errorf("keep the repository template: %w", err)
		}
	}
	return filepath.Join(dir, ".git"), nil
}

// templateVersion changes whenever what emptyRepo makes does, so that a
// template made by older code is not used.
const templateVersion = "1"

// Copy makes a copy of the repository, work tree and .git, in a folder
// of t's: a test whose subtests each spoil the same repository builds it
// once and copies it, which is far cheaper than the git commands that
// made it. The repository holds no symbolic links to copy.
func (r *Repo) Copy(t testing.TB) *Repo {
	t.Helper()
	c := &Repo{t: t, Dir: t.TempDir()}
	if err := os.CopyFS(c.Dir, os.DirFS(r.Dir)); err != nil {
		t.Fatalf("copy the repository %s: %v", r.Dir, err)
	}
	return c
}

// Git runs git in the repository and returns its trimmed output.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Write writes a file of the work tree, making its directories.
func (r *Repo) Write(name, data string, mode os.FileMode) {
	r.t.Helper()
	if mode == 0 {
		mode = 0o644
	}
	skilltest.WriteFileMode(r.t, filepath.Join(r.Dir, filepath.FromSlash(name)), data, mode)
}

// WriteFrom writes a file of the work tree from what data reads, making
// its directories: a large file never held whole.
func (r *Repo) WriteFrom(name string, data io.Reader, mode os.FileMode) {
	r.t.Helper()
	if mode == 0 {
		mode = 0o644
	}
	p := filepath.Join(r.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err == nil {
		_, err = io.Copy(f, data)
		err = errors.Join(err, f.Close())
	}
	if err == nil {
		err = os.Chmod(p, mode)
	}
	if err != nil {
		r.t.Fatalf("write %s: %v", p, err)
	}
}

// Skill writes dir/SKILL.md for a valid skill named after dir's base.
func (r *Repo) Skill(dir, description string) {
	r.t.Helper()
	r.Write(dir+"/SKILL.md", skilltest.SkillMD(filepath.Base(dir), description), 0)
}

// Symlink makes a symbolic link name pointing at target.
func (r *Repo) Symlink(target, name string) {
	r.t.Helper()
	p := filepath.Join(r.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		r.t.Fatal(err)
	}
}

// Remove deletes a path of the work tree.
func (r *Repo) Remove(name string) {
	r.t.Helper()
	if err := os.RemoveAll(filepath.Join(r.Dir, filepath.FromSlash(name))); err != nil {
		r.t.Fatal(err)
	}
}

// Commit stages everything and commits it, returning the commit hash.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Head()
}

// Head returns the hash of HEAD. It reads the branch's loose ref, as
// git writes it on a commit, or its line in packed-refs when there is
// none, and asks git rev-parse otherwise (a detached HEAD, another ref
// format): a process for what one file read says costs 15 to 20 ms of
// CPU, and every Commit ends here.
func (r *Repo) Head() string {
	r.t.Helper()
	gitDir := filepath.Join(r.Dir, ".git")
	if head, err := os.ReadFile(filepath.Join(gitDir, "HEAD")); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok && strings.HasPrefix(ref, "refs/heads/") && !strings.Contains(ref, "..") {
			if hash, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
				if h := strings.TrimSpace(string(hash)); isHash(h) {
					return h
				}
			} else if packed, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
				// No loose ref: git gc packed it.
				for _, line := range strings.Split(string(packed), "\n") {
					if h, name, ok := strings.Cut(line, " "); ok && name == ref && isHash(h) {
						return h
					}
				}
			}
		}
	}
	return r.Git("rev-parse", "HEAD")
}

// isHash reports whether s is a full SHA-1 or SHA-256 object name in
// lower-case hexadecimal.
func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// PackedTags writes the repository's packed-refs as git pack-refs would:
// the branch main and n tags, named prefix and i zero-padded to width
// digits, all at commit head. The file (megabytes for the tests that
// flood a listing with refs) is written line by line from one reused
// buffer: made with fmt in the race-built test's memory it cost a second
// of CPU.
func (r *Repo) PackedTags(head string, n int, prefix string, width int) {
	r.t.Helper()
	if n > 0 && len(strconv.Itoa(n-1)) > width {
		r.t.Fatalf("PackedTags: %d tags do not fit in %d digits", n, width)
	}
	f, err := os.Create(filepath.Join(r.Dir, ".git", "packed-refs"))
	if err != nil {
		r.t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	w.WriteString(head + " refs/heads/main\n")
	line := []byte(head + " refs/tags/" + prefix + strings.Repeat("0", width) + "\n")
	digits := line[len(line)-1-width : len(line)-1]
	for i := 0; i < n; i++ {
		for j, v := len(digits)-1, i; j >= 0 && (v > 0 || j == len(digits)-1); j, v = j-1, v/10 {
			digits[j] = byte('0' + v%10)
		}
		w.Write(line)
	}
	err = w.Flush()
	if err = errors.Join(err, f.Close()); err != nil {
		r.t.Fatal(err)
	}
}

// AcceptPushes lets the repository take pushes: to its checked-out
// branch (its work tree is left as it is) and over smart HTTP.
func (r *Repo) AcceptPushes() {
	r.t.Helper()
	r.Git("config", "receive.denyCurrentBranch", "ignore")
	r.Git("config", "http.receivepack", "true")
}

// ServeHTTP moves the repository into a folder of its own, as name, and
// serves that folder over smart HTTP as ServeHTTP does (basic auth as
// user when password is set). It returns the server and the
// repository's URL on it; Dir follows the move.
func (r *Repo) ServeHTTP(name, user, password string) (*HTTPServer, string) {
	r.t.Helper()
	root := r.t.TempDir()
	moved := filepath.Join(root, name)
	if err := os.Rename(r.Dir, moved); err != nil {
		r.t.Fatal(err)
	}
	r.Dir = moved
	srv := ServeHTTP(r.t, root, user, password)
	return srv, srv.URL + "/" + name
}

// URL returns the repository's file:// URL.
func (r *Repo) URL() string { return "file://" + r.Dir }

// MkTree writes a tree with git mktree from lines of the form
// "MODE TYPE HASH\tNAME", bypassing every check git add would make, such
// as the one refusing a file named "..". It returns the tree's hash.
func (r *Repo) MkTree(lines ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", "mktree")
	cmd.Dir = r.Dir
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git mktree: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// CommitTree commits the tree MkTree makes of lines and moves branch to
// it. It returns the commit hash.
func (r *Repo) CommitTree(branch, msg string, lines ...string) string {
	r.t.Helper()
	commit := r.Git("commit-tree", r.MkTree(lines...), "-m", msg)
	r.Git("update-ref", "refs/heads/"+branch, commit)
	return commit
}

// FastImport runs git fast-import on stream: many commits made in one
// process, packed, where Write and Commit run two processes for each.
// The work tree is left as it is.
func (r *Repo) FastImport(stream string) {
	r.t.Helper()
	r.fastImport(stream)
}

// fastImport runs git fast-import on stream with args before its own.
func (r *Repo) fastImport(stream string, args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", append(args, "fast-import", "--quiet")...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = strings.NewReader(stream)
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git fast-import: %v\n%s", err, out)
	}
}

// CommitFiles commits files (path, content; mode 100644) as one commit
// on branch, on top of what the branch holds, with one git fast-import:
// hundreds of files written to the work tree and added by git add were
// that many files written twice and loose objects made, where the test
// only packs the commit. The work tree and the index are left as they
// are; the commit's dates are Commit's. It returns the commit's hash.
func (r *Repo) CommitFiles(branch, msg string, files map[string]string) string {
	r.t.Helper()
	withModes := make(map[string]File, len(files))
	for name, data := range files {
		withModes[name] = File{Data: data}
	}
	return r.ImportCommit(branch, msg, withModes)
}

// File is a file ImportCommit commits: its content, and its mode (any
// executable bit makes it 100755, as git add does).
type File struct {
	Data string
	Mode os.FileMode
}

// ImportCommit is CommitFiles with each file's mode: the commit is the
// one git add -A and git commit make of the same files (TestCommitFiles),
// and its objects are in a pack of their own, however few.
func (r *Repo) ImportCommit(branch, msg string, files map[string]File) string {
	r.t.Helper()
	const who = "Test <test@example.com> 1767323045 +0000" // 2026-01-02T03:04:05Z, as Git sets it
	var stream strings.Builder
	msg += "\n" // as git commit -m ends it
	fmt.Fprintf(&stream, "commit refs/heads/%s\nauthor %s\ncommitter %s\ndata %d\n%s\n", branch, who, who, len(msg), msg)
	if r.hasBranch(branch) {
		// Without it git fast-import starts the branch anew.
		fmt.Fprintf(&stream, "from refs/heads/%s^0\n", branch)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f := files[name]
		mode := "100644"
		if f.Mode&0o111 != 0 {
			mode = "100755"
		}
		fmt.Fprintf(&stream, "M %s inline %s\ndata %d\n%s\n", mode, name, len(f.Data), f.Data)
	}
	// Packed, however few the objects: by default git fast-import
	// unpacks a pack of under 100 objects, in a second process.
	r.fastImport(stream.String(), "-c", "fastimport.unpackLimit=0")
	// git fast-import writes the branch's loose ref.
	if head, err := os.ReadFile(filepath.Join(r.Dir, ".git", "refs", "heads", filepath.FromSlash(branch))); err == nil && isHash(strings.TrimSpace(string(head))) {
		return strings.TrimSpace(string(head))
	}
	return r.Git("rev-parse", "refs/heads/"+branch)
}

// hasBranch reports whether the branch has a loose ref or a line in
// packed-refs.
func (r *Repo) hasBranch(branch string) bool {
	gitDir := filepath.Join(r.Dir, ".git")
	if _, err := os.Stat(filepath.Join(gitDir, "refs", "heads", filepath.FromSlash(branch))); err == nil {
		return true
	}
	packed, _ := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	return strings.Contains(string(packed), " refs/heads/"+branch+"\n")
}

// Blob stores data as a blob and returns its hash.
func (r *Repo) Blob(data string) string {
	r.t.Helper()
	return r.BlobFrom(strings.NewReader(data))
}

// BlobFrom stores what data reads as a blob and returns its hash. The
// data streams to git, so a blob of any size costs the test no memory.
func (r *Repo) BlobFrom(data io.Reader) string {
	r.t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir = r.Dir
	cmd.Stdin = data
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}
