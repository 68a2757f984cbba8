package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/gittest"
)

// TestFetchChangesNothingUntilSync fetches into the store, sees the
// workspace unchanged, syncs, and then reads everything from the cache
// with the remote gone.
func TestFetchChangesNothingUntilSync(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/team-skill", "A skill from git.")
	up.Write("skills/team-skill/run.sh", "#!/bin/sh\n", 0o755)
	head := up.Commit("first")
	ws := t.TempDir()
	config := "repositories:\n  - git: " + up.URL() + "\n"
	if err := os.WriteFile(filepath.Join(ws, "skillsync.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(up.Dir)

	r := run(t, ws, "list")
	if r.code != 0 || !strings.Contains(r.stderr, "source "+name+" is not synced yet: run skillsync sync") {
		t.Errorf("list before fetch: %d\n%s", r.code, r.stderr)
	}

	res := decode[[]struct {
		Source, Revision, Status, Error string
		DurationMS                      *int64 `json:"duration_ms"`
	}](t, run(t, ws, "fetch", "--json"))
	if len(res) != 1 || res[0].Revision != head || res[0].Status != "updated" || res[0].Source != name || res[0].DurationMS == nil {
		t.Fatalf("fetch = %+v", res)
	}
	again := run(t, ws, "fetch")
	if strings.Contains(again.stderr, "\x1b") || strings.Contains(again.stderr, "\r") {
		t.Errorf("progress was drawn on a pipe: %q", again.stderr)
	}
	if again.code != 0 || !strings.Contains(again.stdout, head[:12]) || !strings.Contains(again.stdout, "unchanged") {
		t.Errorf("second fetch: %d %s %s", again.code, again.stdout, again.stderr)
	}

	// A fetch changes nothing in the workspace: list still shows no
	// skill of the source, and writes nothing.
	if r := run(t, ws, "list", "--json"); strings.Contains(r.stdout, "team-skill") || !strings.Contains(r.stderr, "not synced yet") {
		t.Errorf("list after a fetch shows what is not on disk:\n%s%s", r.stdout, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(ws, "skills")); err == nil {
		t.Error("list wrote into the workspace")
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %s", r.stderr)
	}

	// The remote is gone: everything still reads from the cache.
	if err := os.RemoveAll(up.Dir); err != nil {
		t.Fatal(err)
	}
	list := decode[[]struct{ Name, Revision string }](t, run(t, ws, "list", "--json"))
	found := false
	for _, e := range list {
		if e.Name == "team-skill" && e.Revision == head {
			found = true
		}
	}
	if !found {
		t.Errorf("list --json lacks team-skill at %s: %+v", head, list)
	}
	if r := run(t, ws, "read", "team-skill", "run.sh"); r.stdout != "#!/bin/sh\n" {
		t.Errorf("read offline: %q %s", r.stdout, r.stderr)
	}
	if r := run(t, ws, "show", "team-skill"); !strings.Contains(r.stdout, "Revision:      "+head) || !strings.Contains(r.stdout, "0755") {
		t.Errorf("show lacks the revision or the mode:\n%s", r.stdout)
	}
	if r := run(t, ws, "fetch"); r.code != 1 {
		t.Errorf("the only source failing exits %d, want 1", r.code)
	}
	if r := run(t, ws, "fetch", "nope"); r.code != 2 {
		t.Errorf("an unknown source exits %d, want 2", r.code)
	}
}

func TestFetchPartialNeverLeaksPassword(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/private", "Behind a password.")
	up.Commit("first")
	_, private := up.ServeHTTP("private", "x-access-token", "the-right-one")
	good := gittest.NewRepo(t, "main")
	good.Skill("skills/public", "No password.")
	good.Commit("first")

	ws := t.TempDir()
	inline := strings.Replace(private, "http://", "http://bob:inline-pw-777@", 1)
	config := `repositories:
  - name: private
    git: ` + private + `
    auth:
      password_env: TEAM_TOKEN
  - name: inline
    git: ` + inline + `
    allow_inline_credentials: true
  - name: public
    git: ` + good.URL() + "\n"
	if err := os.WriteFile(filepath.Join(ws, "skillsync.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"TEAM_TOKEN=wrong-token-999"}
	for _, args := range [][]string{{"fetch"}, {"fetch", "--json"}} {
		r := runEnv(t, ws, env, args...)
		if r.code != 3 {
			t.Errorf("%v: exit %d, want 3 (partial)\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		all := r.stdout + r.stderr
		for _, secret := range []string{"wrong-token-999", "inline-pw-777"} {
			if strings.Contains(all, secret) {
				t.Errorf("%v printed the secret %s:\n%s", args, secret, all)
			}
		}
		if !strings.Contains(all, "authentication failed for "+private+": check password_env TEAM_TOKEN") {
			t.Errorf("%v lacks the auth message:\n%s", args, all)
		}
		if !strings.Contains(all, "http://***@127.0.0.1") {
			t.Errorf("%v does not show the inline URL redacted:\n%s", args, all)
		}
	}
	stores, _ := filepath.Glob(filepath.Join(os.TempDir(), "*inline-pw-777*"))
	if len(stores) > 0 {
		t.Errorf("a path holds the password: %v", stores)
	}
	if r := runEnv(t, ws, []string{"TEAM_TOKEN=the-right-one"}, "fetch", "private"); r.code != 0 {
		t.Errorf("with the right token: %d %s", r.code, r.stderr)
	}
}
