package git_test

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/repository/repositorytest"
	"github.com/skillsync/skillsync/skill"
)

func newGit(t *testing.T, url, ref string, mut ...func(*git.GitConfig)) *git.Git {
	t.Helper()
	return newGitIn(t, nil, url, ref, mut...)
}

// newGitIn is newGit whose credentials named by variable come from
// environ (KEY=VALUE pairs) alone.
func newGitIn(t *testing.T, environ []string, url, ref string, mut ...func(*git.GitConfig)) *git.Git {
	t.Helper()
	cfg := git.GitConfig{Source: "team", URL: url, Ref: ref, Depth: 1, Timeout: 30 * time.Second, StoreRoot: t.TempDir()}
	for _, m := range mut {
		m(&cfg)
	}
	opts := repository.Options{MaxFileSize: 10 << 20}
	if environ != nil {
		opts.Env = hostenv.New(t.TempDir(), environ)
	}
	return git.NewGit(cfg, opts)
}

func fetch(t *testing.T, g *git.Git) repository.FetchResult {
	t.Helper()
	res, err := g.Fetch(context.Background())
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return res
}

func names(t *testing.T, g *git.Git) []string {
	t.Helper()
	skills, _, err := g.Skills(context.Background())
	if err != nil {
		t.Fatalf("skills: %v", err)
	}
	return skillNames(skills)
}

func TestGitConformance(t *testing.T) {
	t.Parallel()
	// The suite asks for 14 sources of four different sets of files.
	// Each set is committed once, in a repository that lives as long as
	// this test, and every source fetches it into a store of its own: a
	// fetch never writes to its remote, and the two git processes of a
	// commit (and the upload-pack that a repository of loose objects
	// costs each fetch) were a third of this test's CPU.
	var mu sync.Mutex
	upstreams := map[string]string{} // the files, as fixtureKey writes them: a file:// URL
	repositorytest.Run(t, func(st *testing.T, files map[string]repositorytest.File, opts repository.Options) repository.Repository {
		key := fixtureKey(files)
		mu.Lock()
		url, ok := upstreams[key]
		if !ok {
			// Committed by git fast-import, the commit git add and git
			// commit make, in one process; its objects packed, so that
			// a fetch reads the refs from the files, not from git
			// upload-pack.
			up := gittest.NewRepoIn(st, t.TempDir(), "main")
			imported := map[string]gittest.File{}
			for name, f := range files {
				imported[name] = gittest.File{Data: f.Data, Mode: f.Mode}
			}
			up.ImportCommit("main", "fixture", imported)
			url = up.URL()
			upstreams[key] = url
		}
		mu.Unlock()
		g := git.NewGit(git.GitConfig{Source: "git", URL: url, Depth: 1, StoreRoot: st.TempDir()}, opts)
		fetch(st, g)
		return g
	}, true)
}

// fixtureKey names a set of files, names, modes and contents: two sets
// have the same key only when they are the same.
func fixtureKey(files map[string]repositorytest.File) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f := files[name]
		fmt.Fprintf(&b, "%d:%s %o %d:%s\n", len(name), name, f.Mode, len(f.Data), f.Data)
	}
	return b.String()
}

func TestGitRefs(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "trunk")
	up.Skill("skills/one", "First.")
	first := up.Commit("one")
	up.Git("tag", "-a", "v1", "-m", "release 1")
	up.Git("tag", "light")
	up.Git("branch", "aaa-first-alphabetically")
	up.Skill("skills/two", "Second.")
	second := up.Commit("two")

	tests := []struct {
		ref  string
		want string
	}{
		{"", second},      // the default branch, through HEAD's symref: trunk, not aaa-...
		{"trunk", second}, // a branch
		{"aaa-first-alphabetically", first},
		{"v1", first},    // an annotated tag, peeled to its commit
		{"light", first}, // a lightweight tag
		{first, first},   // a full commit SHA
	}
	for _, tt := range tests {
		t.Run("ref="+tt.ref, func(t *testing.T) {
			g := newGit(t, up.URL(), tt.ref)
			res := fetch(t, g)
			if string(res.Revision) != tt.want || !res.Updated {
				t.Errorf("revision %s (updated %v), want %s", res.Revision, res.Updated, tt.want)
			}
			if cur, err := g.Current(context.Background()); err != nil || string(cur) != tt.want {
				t.Errorf("Current = %s, %v", cur, err)
			}
		})
	}
}

func TestGitPath(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/in-skills", "Under skills/.")
	up.Skill("other/elsewhere", "Under other/.")
	up.Skill("top", "At the root.")
	up.Commit("layout")
	if got := names(t, fetchAnd(t, newGit(t, up.URL(), ""))); !slices.Equal(got, []string{"in-skills"}) {
		t.Errorf("default path = %v, want skills/ only", got)
	}
	if got := names(t, fetchAnd(t, newGit(t, up.URL(), "", func(c *git.GitConfig) { c.Path = "other" }))); !slices.Equal(got, []string{"elsewhere"}) {
		t.Errorf("path: other = %v", got)
	}
	up.Remove("skills")
	up.Commit("no skills/ any more")
	if got := names(t, fetchAnd(t, newGit(t, up.URL(), ""))); !slices.Equal(got, []string{"elsewhere", "top"}) {
		t.Errorf("without skills/ the root is searched: %v", got)
	}
}

func fetchAnd(t *testing.T, g *git.Git) *git.Git {
	fetch(t, g)
	return g
}

// servedWithToken is a repository whose first commit holds skills/one,
// served over smart HTTP behind basic auth with the token s3cret-token,
// and a source following its main branch with the token in TEAM_TOKEN.
func servedWithToken(t *testing.T) (up *gittest.Repo, first string, srv *gittest.HTTPServer, g *git.Git) {
	t.Helper()
	up = gittest.NewRepo(t, "main")
	srv, url := up.ServeHTTP("skills", "x-access-token", "s3cret-token")
	up.Skill("skills/one", "First.")
	first = up.Commit("one")
	g = newGitIn(t, []string{"TEAM_TOKEN=s3cret-token"}, url, "main", func(c *git.GitConfig) { c.Auth.PasswordEnv = "TEAM_TOKEN" })
	return up, first, srv, g
}

func TestGitFollowsUpstreamOverHTTP(t *testing.T) {
	t.Parallel()
	up, first, srv, g := servedWithToken(t)

	if res := fetch(t, g); string(res.Revision) != first || !res.Updated {
		t.Fatalf("first fetch = %+v", res)
	}
	packs := srv.UploadPacks.Load()
	if packs == 0 {
		t.Fatal("the first fetch asked the server for no objects")
	}

	// Nothing new upstream: the refs are listed, no objects are fetched.
	if res := fetch(t, g); res.Updated || string(res.Revision) != first {
		t.Errorf("unchanged fetch = %+v", res)
	}
	if n := srv.UploadPacks.Load(); n != packs {
		t.Errorf("an unchanged upstream cost %d upload-pack requests, want 0", n-packs)
	}

	// A new commit is seen by the next fetch.
	up.Skill("skills/two", "Second.")
	second := up.Commit("two")
	if res := fetch(t, g); string(res.Revision) != second || !res.Updated {
		t.Errorf("after a new commit = %+v, want %s", res, second)
	}
	if got := names(t, g); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("skills = %v", got)
	}
	// Many commits later, a shallow store still follows (go-git's shallow
	// Pull fails here; a fetch must not).
	for i := 0; i < 3; i++ {
		up.Write("skills/one/notes.md", strings.Repeat("x", i+1), 0)
		up.Commit("more")
	}
	if res := fetch(t, g); string(res.Revision) != up.Head() {
		t.Errorf("after three commits = %s, want %s", res.Revision, up.Head())
	}

	// A force-push back to an older commit is followed, without a fetch.
	packs = srv.UploadPacks.Load()
	up.Git("reset", "-q", "--hard", first)
	if res := fetch(t, g); string(res.Revision) != first || !res.Updated {
		t.Errorf("after a force-push to the first commit = %+v", res)
	}
	if n := srv.UploadPacks.Load(); n != packs {
		t.Errorf("going back to a commit in the store fetched %d times", n-packs)
	}
	if got := names(t, g); !slices.Equal(got, []string{"one"}) {
		t.Errorf("skills after the force-push = %v", got)
	}
}

func TestGitWrongPassword(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	srv, url := up.ServeHTTP("r", "x-access-token", "right-password")
	url = strings.Replace(url, "http://", "http://user:inline-secret-456@", 1)
	g := newGitIn(t, []string{"TEAM_TOKEN=wrong-password-123"}, url, "", func(c *git.GitConfig) { c.Auth.PasswordEnv = "TEAM_TOKEN" })
	_, err := g.Fetch(context.Background())
	if !errors.Is(err, git.ErrAuth) {
		t.Fatalf("err = %v, want ErrAuth", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "authentication failed for http://***@127.0.0.1") || !strings.Contains(msg, "check password_env TEAM_TOKEN") {
		t.Errorf("message = %q", msg)
	}
	for _, secret := range []string{"wrong-password-123", "inline-secret-456"} {
		if strings.Contains(msg, secret) || strings.Contains(g.StoreDir(), secret) || strings.Contains(g.URL(), secret) {
			t.Errorf("%s leaked: %q, store %s", secret, msg, g.StoreDir())
		}
	}
	if srv.Requests.Load() > 2 {
		t.Errorf("a refused login was tried %d times; it is not transient", srv.Requests.Load())
	}
}

func TestGitDeletedBranchKeepsLastGood(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	up.Git("checkout", "-q", "-b", "feature")
	feature := up.Commit("feature")
	g := newGit(t, up.URL(), "feature")
	fetch(t, g)
	up.Git("checkout", "-q", "main")
	up.Git("branch", "-q", "-D", "feature")
	_, err := g.Fetch(context.Background())
	if err == nil || !strings.Contains(err.Error(), `ref "feature" is not on the remote`) {
		t.Fatalf("fetch of a deleted branch: %v", err)
	}
	if cur, err := g.Current(context.Background()); err != nil || string(cur) != feature {
		t.Errorf("last good revision = %s, %v; want %s", cur, err, feature)
	}
	if got := names(t, g); !slices.Equal(got, []string{"one"}) {
		t.Errorf("skills at the last good revision = %v", got)
	}
}

func TestGitNotFetched(t *testing.T) {
	t.Parallel()
	g := newGit(t, "file:///nowhere", "")
	if _, _, err := g.Skills(context.Background()); !errors.Is(err, repository.ErrNotFetched) {
		t.Errorf("Skills before any fetch = %v, want ErrNotFetched", err)
	}
}

func TestGitTreeEdgeCases(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/links", "Links.")
	up.Write("skills/links/real.md", "real content\n", 0)
	up.Write("skills/links/run.sh", "#!/bin/sh\n", 0o755)
	up.Symlink("real.md", "skills/links/inside.md")
	up.Skill("skills/escape", "A link out of the skill.")
	up.Symlink("../other/SKILL.md", "skills/escape/outside.md")
	up.Skill("skills/other", "Other.")
	up.Skill("skills/big", "Has a 12 MiB file.")
	// The 12 MiB file streams to the work tree, and its blob is in a
	// pack already, so git add only hashes it: built in the test's
	// memory and compressed by git add and again by git upload-pack, it
	// was half of this test's CPU.
	big := gittest.Repeated{Unit: "z", Size: 12 << 20}
	up.PackObject("blob", big)
	up.WriteFrom("skills/big/assets/blob.bin", big.Reader(), 0)
	up.Skill("skills/withsub", "Has a submodule.")
	up.Commit("edge cases")
	sub := gittest.NewRepo(t, "main")
	sub.Commit("sub")
	up.Git("-c", "protocol.file.allow=always", "submodule", "-q", "add", sub.URL(), "skills/withsub/vendor")
	up.Commit("submodule")

	g := newGit(t, up.URL(), "")
	fetch(t, g)
	skills, problems, err := g.Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range skills {
		got = append(got, s.Name)
	}
	if !slices.Equal(got, []string{"escape", "links", "other", "withsub"}) {
		t.Errorf("skills = %v (big must be an error)", got)
	}
	has := func(rule, file string) bool {
		return slices.ContainsFunc(problems, func(p skill.Problem) bool { return p.Rule == rule && p.File == file })
	}
	if !has("file-too-large", "skills/big/assets/blob.bin") {
		t.Errorf("no file-too-large for the 12 MiB file: %v", problems)
	}
	if !has("symlink-outside", "skills/escape/outside.md") {
		t.Errorf("no symlink-outside for a link out of the skill: %v", problems)
	}
	if !slices.ContainsFunc(problems, func(p skill.Problem) bool {
		return p.File == "skills/withsub/vendor" && strings.Contains(p.Message, "submodule")
	}) {
		t.Errorf("no problem for the submodule: %v", problems)
	}
	escape, _ := skill.ListFiles(skills[0].Files, skills[0].Path, 0)
	if slices.ContainsFunc(escape, func(f skill.File) bool { return f.Path == "outside.md" }) {
		t.Error("a link out of the skill is listed as a file")
	}
	links := skills[1]
	files, _ := skill.ListFiles(links.Files, links.Path, 0)
	modes := map[string]string{}
	for _, f := range files {
		modes[f.Path] = f.Mode.String()
	}
	if modes["inside.md"] != "-rw-r--r--" || modes["run.sh"] != "-rwxr-xr-x" {
		t.Errorf("files = %v", modes)
	}
	data, err := fs.ReadFile(links.Files, "inside.md")
	if err != nil || string(data) != "real content\n" {
		t.Errorf("a link inside the skill reads %q, %v", data, err)
	}
	if err := fstest.TestFS(links.Files, "SKILL.md", "real.md", "run.sh", "inside.md"); err != nil {
		t.Errorf("TreeFS: %v", err)
	}
}

func TestGitOverSSH(t *testing.T) {
	t.Parallel()
	srv := gittest.StartSSH(t)
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/remote", "Fetched over SSH.")
	head := up.Commit("ssh")
	g := newGit(t, srv.URL(up.Dir), "", func(c *git.GitConfig) {
		c.Auth.SSHKeyFile = srv.ClientKey
		c.Auth.KnownHostsFile = srv.KnownHostsFile
	})
	if res := fetch(t, g); string(res.Revision) != head {
		t.Errorf("revision = %s, want %s", res.Revision, head)
	}
	if got := names(t, g); !slices.Equal(got, []string{"remote"}) {
		t.Errorf("skills = %v", got)
	}

	// A host key that is not in known_hosts is refused.
	other := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(other, []byte("[127.0.0.1]:1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7ZgUlzKnD3S0wHtKGvBrsCgB3XUg0n3cCT8zTBKkFM\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := newGit(t, srv.URL(up.Dir), "", func(c *git.GitConfig) {
		c.Auth.SSHKeyFile = srv.ClientKey
		c.Auth.KnownHostsFile = other
	})
	if _, err := bad.Fetch(context.Background()); err == nil {
		t.Error("a host missing from known_hosts was trusted")
	}
}

func TestGitCommitRefFetchedOnce(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	sha := up.Commit("one")
	g := newGit(t, up.URL(), sha)
	if res := fetch(t, g); !res.Updated {
		t.Fatalf("first fetch = %+v", res)
	}
	if err := os.RemoveAll(up.Dir); err != nil {
		t.Fatal(err)
	}
	// The remote is gone; a commit cannot change, so it is not asked.
	if res := fetch(t, g); res.Updated || string(res.Revision) != sha {
		t.Errorf("second fetch = %+v", res)
	}
}

func TestGitRetriesTransientErrors(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	head := up.Commit("one")
	srv, url := up.ServeHTTP("r", "", "")
	srv.FailNext.Store(2)
	g := newGit(t, url, "")
	if res := fetch(t, g); string(res.Revision) != head {
		t.Fatalf("revision %s, want %s", res.Revision, head)
	}
	// Two refused attempts, then the listing and the fetch.
	if n := srv.Requests.Load(); n < 4 {
		t.Errorf("the server saw %d requests; two 503s must be retried", n)
	}
	srv.FailNext.Store(3)
	if _, err := g.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("three failures in a row must fail, saying why: %v", err)
	}
}

// TestGitPathThatIsNoFolder: a path: that names nothing, or a file, is
// an error that names it and the folders beside it to choose from.
func TestGitPathThatIsNoFolder(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "One.")
	up.Skill("skills/two", "Two.")
	up.Symlink("../../outside", "skills/away")
	up.Commit("layout")
	for _, tt := range []struct{ path, want string }{
		// A link out of the repository is refused, and the refusal shown.
		{"skills/away", "path: skills/away: cannot be read (resolves outside the source directory) at commit "},
		{"nope", "path: nope: no such folder at commit "},
		{"nope", "; the repository's top level holds skills/ (path: names the folder that holds the skills)"},
		{"skills/x/y", "path: skills/x/y: no such folder at commit "},
		{"skills/x/y", "; skills/ holds one/, two/ ("},
		{"skills/one/SKILL.md", "path: skills/one/SKILL.md: not a folder at commit "},
		{"skills/one/SKILL.md", "; skills/one/ holds no folder ("},
	} {
		g := fetchAnd(t, newGit(t, up.URL(), "", func(c *git.GitConfig) { c.Path = tt.path }))
		_, _, err := g.Skills(context.Background())
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "sub ") {
			t.Errorf("path %s: %v, want it to say %q", tt.path, err, tt.want)
		}
	}
}
