package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/pgtest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

func TestPublishFlags(t *testing.T) {
	t.Parallel()
	got, err := parse(t, newPublishCommand, "skills/pdf", "--to", "team", "--author", "alice")
	if err != nil || *got != (publishOptions{dir: "skills/pdf", to: "team", author: "alice"}) {
		t.Errorf("publish = %+v, %v", got, err)
	}
	for _, argv := range [][]string{nil, {"a", "b", "--to", "team"}} {
		if _, err := parse(t, newPublishCommand, argv...); exitCode(err) != exitUsage {
			t.Errorf("publish %v exits %d, want %d", argv, exitCode(err), exitUsage)
		}
	}
}

// TestPublish: a valid skill is written and its revision printed; the
// same files again change nothing; a skill that fails strict validation
// is refused with its problems; only a postgres source of the config can
// be published to.
func TestPublish(t *testing.T) {
	t.Parallel()
	w := newPGWorkspace(t, pgCluster.Get(t), "", "  - name: local\n    dir: "+t.TempDir()+"\n")
	dir := skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files.", map[string]string{"scripts/run.sh": "#!/bin/sh\n"})

	r := run(t, w.dir, "publish", dir, "--to", "team", "--author", "alice")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "published pdf to team at revision ") {
		t.Fatalf("publish: exit %d: %q %s", r.code, r.stdout, r.stderr)
	}
	rev := strings.TrimSpace(strings.TrimPrefix(r.stdout, "published pdf to team at revision "))
	type output struct {
		Source, Skill, Revision string
		Published               bool
		Problems                []struct{ Level, Rule, File string }
	}
	again := decode[output](t, run(t, w.dir, "publish", dir, "--to", "team", "--json"))
	if again.Source != "team" || again.Skill != "pdf" || again.Revision != rev || !again.Published || len(again.Problems) != 0 {
		t.Errorf("the same files again: %+v, want revision %s unchanged", again, rev)
	}
	if got := pgtest.QueryValue[string](t, w.cluster, "SELECT author FROM "+w.schema+".changes ORDER BY id DESC LIMIT 1"); got != "alice" {
		t.Errorf("the change is recorded as made by %q, want alice", got)
	}

	// Strict: a warning (a name that is not lower case and differs from
	// the directory) refuses the skill as an error would.
	bad := skilltest.Skill(t, t.TempDir(), "docx", "Write Word files.", nil)
	if err := os.WriteFile(filepath.Join(bad, "SKILL.md"), []byte("---\nname: Docx\ndescription: Write Word files.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, w.dir, "publish", bad, "--to", "team")
	skillMD := filepath.Join(bad, "SKILL.md")
	if r.code != 1 || !strings.Contains(r.stderr, skillMD+":2: error: ") || !strings.Contains(r.stderr, "(name-not-lowercase)") || r.stdout != "" {
		t.Errorf("a skill with warnings: exit %d, want 1 with its problems at %s:\n%s%s", r.code, skillMD, r.stdout, r.stderr)
	}
	refused := decode[output](t, run(t, w.dir, "publish", bad, "--to", "team", "--json"))
	if refused.Published || refused.Skill != "docx" || len(refused.Problems) == 0 || refused.Problems[0].Level != "error" || refused.Problems[0].File != skillMD {
		t.Errorf("publish --json of a refused skill: %+v", refused)
	}
	if r := run(t, w.dir, "sync"); r.code != 0 || cached(w.dir, "team", "docx/SKILL.md") != "" || cached(w.dir, "team", "pdf/scripts/run.sh") != "#!/bin/sh\n" {
		t.Errorf("after one publish and one refusal the cache is wrong: exit %d %s", r.code, r.stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"publish", dir, "--to", "local"}, "source local is a dir source"},
		{[]string{"publish", dir, "--to", "nope"}, `no source named "nope"`},
		{[]string{"publish", dir}, "--to SOURCE is required"},
	} {
		if r := run(t, w.dir, tc.args...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 saying %q: %s", tc.args, r.code, tc.want, r.stderr)
		}
	}
	if r := run(t, w.dir, "publish", filepath.Join(t.TempDir(), "missing"), "--to", "team"); r.code != 1 {
		t.Errorf("a missing directory: exit %d, want 1: %s", r.code, r.stderr)
	}
}

// TestPublishKeepsToTheDirectory: a symbolic link that leads out of the
// skill's directory is not published; the skill is refused, strict.
func TestPublishKeepsToTheDirectory(t *testing.T) {
	t.Parallel()
	w := newPGWorkspace(t, pgCluster.Get(t), "", "")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("not for the registry"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := skilltest.Skill(t, t.TempDir(), "pdf", "Read PDF files.", nil)
	if err := os.Symlink(secret, filepath.Join(dir, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	r := run(t, w.dir, "publish", dir, "--to", "team")
	if r.code != 1 || !strings.Contains(r.stderr, "symlink-outside") {
		t.Errorf("a link out of the skill: exit %d, want 1 with symlink-outside: %s", r.code, r.stderr)
	}
	if r := run(t, w.dir, "sync"); r.code != 0 || cached(w.dir, "team", "pdf/leak.txt") != "" {
		t.Errorf("the linked file reached the cache: exit %d %s", r.code, r.stderr)
	}
}
