package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// snapshot records every path below dir with its size, mode, mtime and
// content hash, to tell that a command wrote nothing there.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		out[p] = fmt.Sprintf("%d %s %d %s", info.Size(), info.Mode(), info.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type lsRemoteResult struct {
	Source, Git, Ref, Path, Revision string
	Skills                           []struct{ Name, Description, Path string }
	Problems                         []struct{ Level, Rule, Path string }
}

// TestLsRemoteChangesNothing lists what a repository offers from a
// synced workspace: the config, the cache and the lock stay as they were,
// and the fetch lands in the machine's git store.
func TestLsRemoteChangesNothing(t *testing.T) {
	t.Parallel()
	team := newTeamRepo(t)
	team.repo.Write("skills/broken/SKILL.md", "---\nname: broken\n---\nno description\n", 0)
	head := team.repo.Commit("a broken skill")
	pushTo(t, team)

	ws := t.TempDir()
	if r := run(t, ws, "init", "--agent", "claude"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	before := snapshot(t, ws)

	// Before the default branch: a second ref of a remote whose
	// shallow store holds a newer commit is a fetch bug of the git
	// adapter, reported.
	human := runEnv(t, ws, team.env(), "add", "acme/team-skills@v1", "--list")
	if human.code != 0 || !strings.Contains(human.stdout, "release-notes  skills/release-notes  Draft release notes") || strings.Contains(human.stdout, "docx") {
		t.Errorf("add --list at v1:\n%s%s", human.stdout, human.stderr)
	}
	if !strings.Contains(human.stderr, "2 skills") {
		t.Errorf("add --list summary: %s", human.stderr)
	}
	r := runEnv(t, ws, team.env(), "ls-remote", "acme/team-skills", "--json")
	if r.code != 0 {
		t.Fatalf("ls-remote: %d %s", r.code, r.stderr)
	}
	got := decode[lsRemoteResult](t, r)
	var names []string
	for _, s := range got.Skills {
		names = append(names, s.Name+"@"+s.Path)
	}
	if strings.Join(names, " ") != "docx@skills/docx pdf@skills/pdf release-notes@skills/release-notes" || got.Revision != head || got.Git != team.host+"/acme/team-skills" {
		t.Errorf("ls-remote = %+v", got)
	}
	if got.Skills[1].Description != "Fill in PDF forms." {
		t.Errorf("description = %q", got.Skills[1].Description)
	}
	if len(got.Problems) != 1 || got.Problems[0].Rule != "description-missing" || got.Problems[0].Level != "error" {
		t.Errorf("problems = %+v", got.Problems)
	}
	stores, _ := os.ReadDir(filepath.Join(home(t), ".cache", "skillsync", "git"))
	if len(stores) == 0 {
		t.Error("nothing was fetched into the machine's git store")
	}

	after := snapshot(t, ws)
	if len(after) != len(before) {
		t.Errorf("ls-remote changed the workspace: %d paths before, %d after", len(before), len(after))
	}
	for p, v := range before {
		if after[p] != v {
			t.Errorf("ls-remote changed %s", p)
		}
	}

	// Without a config, in an empty directory: nothing is written either.
	empty := t.TempDir()
	if r := runEnv(t, empty, team.env(), "ls-remote", "acme/team-skills"); r.code != 0 {
		t.Errorf("ls-remote without a config: %d %s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("ls-remote wrote into an empty directory: %v", entries)
	}
	if r := runEnv(t, empty, team.env(), "ls-remote", "acme/nothing-here"); r.code != 1 || !strings.Contains(r.stderr, "acme/nothing-here") {
		t.Errorf("a missing repository: %d %s", r.code, r.stderr)
	}
}

// pushTo brings the served bare copy up to date with the work tree.
func pushTo(t *testing.T, team *teamRepo) {
	t.Helper()
	team.repo.Git("push", "-q", "--tags", "--force", filepath.Join(team.root, "acme", "team-skills.git"), "main")
}

func TestLsRemoteLocal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := run(t, dir, "new", "notes", "shared"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	got := decode[lsRemoteResult](t, run(t, dir, "ls-remote", "./shared", "--json"))
	if len(got.Skills) != 1 || got.Skills[0].Name != "notes" || got.Source != "shared" {
		t.Errorf("ls-remote ./shared = %+v", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("ls-remote wrote into the directory: %v", entries)
	}
}

// TestLsRemoteShowsWhatASyncTakes: a source with one name at two paths
// offers the copy whose path sorts first, as a sync takes it, and says
// so, rather than list the name twice.
func TestLsRemoteShowsWhatASyncTakes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"shared/a/pdf", "shared/b/pdf"} {
		writeTree(t, dir, map[string]string{p + "/SKILL.md": "---\nname: pdf\ndescription: Read PDFs.\n---\nBody.\n"})
	}
	got := decode[lsRemoteResult](t, run(t, dir, "ls-remote", "./shared", "--json"))
	dup := slices.ContainsFunc(got.Problems, func(p struct{ Level, Rule, Path string }) bool {
		return p.Rule == "duplicate-name" && p.Path == "b/pdf"
	})
	if len(got.Skills) != 1 || got.Skills[0].Path != "a/pdf" || !dup {
		t.Errorf("ls-remote of a name at two paths = %+v", got)
	}
}
