package main

import (
	"crypto/sha256"
	encbinary "encoding/binary"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/fleet"
	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// hostIDs returns one host id that takes skill at percent and one that
// does not.
func hostIDs(t *testing.T, skill string, percent int) (in, out string) {
	t.Helper()
	for i := 0; in == "" || out == ""; i++ {
		id := fmt.Sprintf("host-%d", i)
		if fleet.Bucket(id, skill) < percent*100 {
			if in == "" {
				in = id
			}
		} else if out == "" {
			out = id
		}
	}
	return in, out
}

func TestRolloutHoldsSkillsBack(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	write := func(name, meta string) {
		skilltest.WriteFile(t, filepath.Join(src, name, "SKILL.md"), "---\nname: "+name+"\ndescription: The "+name+" skill.\n"+meta+"---\n# "+name+"\n")
	}
	write("plain", "")
	write("half", "metadata:\n  rollout: \"50%\"\n")
	write("staging-only", "metadata:\n  environments: staging\n")
	write("broken", "metadata:\n  rollout: lots\n")
	in, out := hostIDs(t, "half", 50)
	ws := func(host string) string {
		dir := t.TempDir()
		skilltest.WriteFile(t, filepath.Join(dir, "skillsync.yaml"), fmt.Sprintf(`repositories:
  - name: team
    dir: %s
targets:
  - dir: .claude/skills
fleet:
  postgres: SKILLSYNC_UNUSED_FLEET_DSN
  host: %s
  environment: prod
`, src, host))
		if r := run(t, dir, "sync"); r.code != 0 {
			t.Fatalf("sync on %s: %d %s", host, r.code, r.stderr)
		}
		return dir
	}
	a, b := ws(in), ws(out)
	listed := func(dir string, args ...string) string {
		t.Helper()
		r := run(t, dir, append([]string{"list"}, args...)...)
		if r.code != 0 {
			t.Fatalf("list: %d %s", r.code, r.stderr)
		}
		return r.stdout
	}
	has := func(dir, name string) bool {
		_, err := os.Stat(filepath.Join(dir, ".claude", "skills", name, "SKILL.md"))
		return err == nil
	}
	if l := listed(a); !strings.Contains(l, "half") || !strings.Contains(l, "plain") || strings.Contains(l, "staging-only") || strings.Contains(l, "broken") || !has(a, "half") {
		t.Fatalf("host %s (in at 50%%):\n%s", in, l)
	}
	if l := listed(b); strings.Contains(l, "half") || !strings.Contains(l, "plain") || has(b, "half") || has(b, "staging-only") || has(b, "broken") {
		t.Fatalf("host %s (out at 50%%):\n%s", out, l)
	}
	all := listed(b, "--all")
	for _, want := range []string{"half (held back: rollout: 50% of hosts, not this one yet)", "staging-only (held back: rollout: environments staging only, this host is in prod)", "broken (held back: rollout: metadata.rollout"} {
		if !strings.Contains(all, want) {
			t.Errorf("list --all misses %q:\n%s", want, all)
		}
	}
	for _, args := range [][]string{{"search", "half"}, {"prompt"}, {"show", "half"}, {"read", "half"}} {
		r := run(t, b, args...)
		if strings.Contains(r.stdout, "The half skill") {
			t.Errorf("%v on a host out of the rollout shows it:\n%s", args, r.stdout)
		}
	}
	if r := run(t, a, "prompt"); !strings.Contains(r.stdout, "half") {
		t.Errorf("prompt on a host in the rollout misses it:\n%s", r.stdout)
	}
	// Asked for by name, it is held back, not unknown.
	for _, verb := range []string{"show", "read", "use"} {
		if r := run(t, b, verb, "half"); r.code == 0 || !strings.Contains(r.stderr, "skill half is held back on this host (rollout: 50% of hosts, not this one yet); skillsync list --all shows") {
			t.Errorf("%s half on a host out of the rollout: %d %s", verb, r.code, r.stderr)
		}
	}
}

func TestPromoteCanaryAndRollout(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/one", "First.")
	up.Commit("one")
	up.AcceptPushes()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\n    publish: direct\npromotion:\n  targets: [team]\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "propose", newSkill(t, "pdf", "Read PDFs.")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "promote", "pdf", "--approver", "alice", "--to", "team", "--canary", "ten"); r.code != 2 {
		t.Fatalf("--canary ten: %d %s", r.code, r.stderr)
	}
	r := run(t, ws, "promote", "pdf", "--approver", "alice", "--to", "team", "--canary", "10%", "--environments", "prod staging")
	if r.code != 0 {
		t.Fatalf("promote --canary: %d %s%s", r.code, r.stdout, r.stderr)
	}
	md := up.Git("show", "main:skills/pdf/SKILL.md")
	if !strings.Contains(md, `rollout: "10%"`) || !strings.Contains(md, `environments: "prod staging"`) || !strings.Contains(md, "author: agent-7") {
		t.Fatalf("the promoted SKILL.md:\n%s", md)
	}
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r = run(t, ws, "rollout", "pdf", "50%", "--approver", "bob")
	if r.code != 0 || !strings.Contains(r.stdout, "rolled out pdf to 50% of hosts") {
		t.Fatalf("rollout: %d %s%s", r.code, r.stdout, r.stderr)
	}
	md = up.Git("show", "main:skills/pdf/SKILL.md")
	if !strings.Contains(md, `rollout: "50%"`) || !strings.Contains(md, "prod staging") || strings.Contains(md, "10%") {
		t.Fatalf("after rollout 50%%:\n%s", md)
	}
	if log := up.Git("log", "-1", "--format=%an %s", "main"); !strings.Contains(log, "bob Roll out skill pdf to 50% of hosts") {
		t.Fatalf("commit: %s", log)
	}
	// The same share again, once the sync has taken it in: the source
	// holds it so, and nothing is published.
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	head := up.Head()
	r = run(t, ws, "rollout", "pdf", "50%", "--approver", "bob")
	if r.code != 0 || !strings.Contains(r.stdout, "pdf is rolled out to 50% of hosts already: source team holds it so at "+head[:12]) {
		t.Fatalf("rollout to the share it has: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if up.Head() != head {
		t.Fatalf("rollout to the share it has published %s", up.Git("log", "-1", "--format=%s"))
	}
	if r := run(t, ws, "rollout", "nope", "50%"); r.code == 0 {
		t.Fatalf("rollout of an unknown skill: %s", r.stdout)
	}
	if r := run(t, ws, "rollout", "pdf", "150%"); r.code != 2 {
		t.Fatalf("rollout 150%%: %d %s", r.code, r.stderr)
	}
}

// TestRolloutOfAShadowedSourceSkill: a source's skill that a workspace
// copy shadows here is still the one hosts take, and the one a rollout
// stages (here refused only because a dir: source takes no
// publications), not a skill that does not exist.
func TestRolloutOfAShadowedSourceSkill(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	body := "---\nname: plain\ndescription: The plain skill.\n---\n# plain\n"
	writeTree(t, ws, map[string]string{"team/plain/SKILL.md": body, "skills/plain/SKILL.md": body,
		"skillsync.yaml": "repositories:\n  - name: team\n    dir: team\n"})
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "rollout", "plain", "50%"); r.code == 0 || !strings.Contains(r.stderr, "source team (dir) takes no publications") {
		t.Errorf("rollout of a shadowed source skill: %d %s", r.code, r.stderr)
	}
}

// TestRolloutKeepsToThePromotionPolicy: a rollout publishes into a
// source as promote does, so the gate's policy holds for it: an approver
// outside promotion.approvers, or a source outside promotion.targets, is
// refused and nothing is pushed.
func TestRolloutKeepsToThePromotionPolicy(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/deploy", "Deploy the service.")
	up.Commit("one")
	up.AcceptPushes()
	ws := t.TempDir()
	source := "repositories:\n  - name: team\n    git: " + up.URL() + "\n    publish: direct\n"
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), source+"promotion:\n  approvers: [alice]\n  targets: [team]\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	head := up.Head()
	if r := run(t, ws, "rollout", "deploy", "20%", "--approver", "mallory"); r.code != 1 || !strings.Contains(r.stderr, "rollout deploy: mallory is not an approver in promotion.approvers") {
		t.Errorf("rollout by mallory: %d %s", r.code, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), source+"promotion:\n  approvers: [alice]\n  targets: [workspace]\n")
	if r := run(t, ws, "rollout", "deploy", "20%", "--approver", "alice"); r.code != 1 || !strings.Contains(r.stderr, "rollout deploy: source team is not in promotion.targets") {
		t.Errorf("rollout to a source outside the targets: %d %s", r.code, r.stderr)
	}
	if up.Head() != head {
		t.Fatalf("a refused rollout pushed %s", up.Git("log", "-1", "--format=%an %s"))
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), source+"promotion:\n  approvers: [alice]\n  targets: [team]\n")
	if r := run(t, ws, "rollout", "deploy", "20%", "--approver", "alice"); r.code != 0 || up.Head() == head {
		t.Errorf("rollout by alice: %d %s", r.code, r.stderr)
	}
	// Without --approver the user running it approves, by name; with no
	// promotion policy any source may be rolled out.
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), source+"promotion:\n  approvers: ["+me.Username+"]\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "rollout", "deploy", "40%"); r.code != 0 {
		t.Errorf("rollout by %s, an approver, without --approver: %d %s", me.Username, r.code, r.stderr)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), source)
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, ws, "rollout", "deploy", "60%"); r.code != 0 {
		t.Errorf("rollout with no promotion policy: %d %s", r.code, r.stderr)
	}
}

// TestRolloutChangesOnlySkillMD: a rollout commits the source's SKILL.md
// with the new share and nothing else. The links a sync leaves out of
// the cache (one out of the skill, one to a folder, a broken one) stay in
// the source, and a link to a file of the skill stays a link.
func TestRolloutChangesOnlySkillMD(t *testing.T) {
	t.Parallel()
	up := gittest.NewRepo(t, "main")
	up.Skill("skills/pdf", "Read PDFs.")
	up.Write("skills/shared/bin/tool", "tool\n", 0o755)
	up.Symlink("../shared/bin", "skills/pdf/bin")
	up.Symlink("nonexistent", "skills/pdf/broken")
	up.Symlink("SKILL.md", "skills/pdf/README.md")
	up.Commit("pdf")
	up.AcceptPushes()
	ws := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - name: team\n    git: "+up.URL()+"\n    publish: direct\npromotion:\n  targets: [team]\n")
	if r := run(t, ws, "sync"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	before := up.Head()
	if r := run(t, ws, "rollout", "pdf", "50%", "--approver", "bob"); r.code != 0 {
		t.Fatalf("rollout: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if got := up.Git("diff", "--name-status", before, "main"); got != "M\tskills/pdf/SKILL.md" {
		t.Errorf("the rollout changed %q, want only skills/pdf/SKILL.md", got)
	}
	if md := up.Git("show", "main:skills/pdf/SKILL.md"); !strings.Contains(md, `rollout: "50%"`) {
		t.Errorf("SKILL.md after the rollout:\n%s", md)
	}
	// The source moved on (by the rollout itself): the next one says to
	// sync first.
	if r := run(t, ws, "rollout", "pdf", "80%", "--approver", "bob"); r.code != 1 || !strings.Contains(r.stderr, "run skillsync sync to see what changed there, and roll out again") {
		t.Errorf("rollout past a source that moved on: %d %s", r.code, r.stderr)
	}
}

// TestRolloutSpellingsOfOneHostAgree: two workspaces of one host whose
// fleet.host differ only in case are one host in the fleet store and
// fleet status, and take or hold back a staged skill together: the
// bucket is the canonical id's.
func TestRolloutSpellingsOfOneHostAgree(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	skilltest.WriteFile(t, filepath.Join(src, "half", "SKILL.md"), "---\nname: half\ndescription: The half skill.\nmetadata:\n  rollout: \"50%\"\n---\n# half\n")
	// An id whose spellings fell on both sides of 50% when the bucket
	// hashed the id as spelled.
	var lower string
	for i := 0; lower == ""; i++ {
		id := fmt.Sprintf("host-%d", i)
		if uncanonicalBucket(strings.ToUpper(id), "half") < 5000 != (uncanonicalBucket(id, "half") < 5000) {
			lower = id
		}
	}
	listed := map[string]bool{}
	for _, host := range []string{lower, strings.ToUpper(lower)} {
		dir := t.TempDir()
		skilltest.WriteFile(t, filepath.Join(dir, "skillsync.yaml"), fmt.Sprintf("repositories:\n  - name: team\n    dir: %s\nfleet:\n  postgres: SKILLSYNC_UNUSED_FLEET_DSN\n  host: %s\n", src, host))
		if r := run(t, dir, "sync"); r.code != 0 {
			t.Fatalf("sync on %s: %d %s", host, r.code, r.stderr)
		}
		r := run(t, dir, "list")
		if r.code != 0 {
			t.Fatalf("list on %s: %d %s", host, r.code, r.stderr)
		}
		listed[host] = strings.Contains(r.stdout, "half")
	}
	if listed[lower] != listed[strings.ToUpper(lower)] {
		t.Errorf("half at 50%%: listed on %s %v, on %s %v; want one answer for one host", lower, listed[lower], strings.ToUpper(lower), listed[strings.ToUpper(lower)])
	}
}

// uncanonicalBucket is the bucket as skillsync computed it before it
// hashed the canonical id: of the id as spelled.
func uncanonicalBucket(host, name string) int {
	sum := sha256.Sum256([]byte(host + "\x00" + strings.ToLower(name)))
	return int(encbinary.BigEndian.Uint64(sum[:8]) % 10000)
}
