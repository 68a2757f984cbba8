package skillsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/daemon"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
	"github.com/skillsync/skillsync/status"
)

// TestLinkedTargetIsRefusedAlone: a target reached through a symbolic
// link (a dotfiles manager's ~/.claude, or one planted in the workspace)
// is refused as a target another workspace keeps is: nothing is written
// through the link, by this sync or the next, while the cache, the lock,
// the other target and the AGENTS.md file are written; the report marks
// the target refused, the error (ErrTargetLinked) names the target, the
// link and the real path to point it at, and status and the daemon say so.
func TestLinkedTargetIsRefusedAlone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		linked string // the target, as the config names it
		link   func(ws, home string) string
		dest   func(ws, home, outside string) string // where the link leads
		real   string                                // in the error, "" to leave unchecked
	}{
		{name: "dotfiles home", linked: "~/.claude/skills",
			link: func(_, home string) string { return filepath.Join(home, ".claude") },
			dest: func(_, home, _ string) string { return filepath.Join(home, "dot", "claude") },
			real: "(dir: ~/dot/claude/skills)"},
		{name: "planted in the workspace", linked: ".claude/skills",
			link: func(ws, _ string) string { return filepath.Join(ws, ".claude") },
			dest: func(_, _, outside string) string { return outside }},
		{name: "planted as the folder", linked: ".claude/skills",
			link: func(ws, _ string) string { return filepath.Join(ws, ".claude", "skills") },
			dest: func(_, _, outside string) string { return outside }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ws, home, outside := t.TempDir(), t.TempDir(), t.TempDir()
			dest, link := tc.dest(ws, home, outside), tc.link(ws, home)
			for _, d := range []string{dest, filepath.Dir(link)} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(dest, link); err != nil {
				t.Skip("no symbolic links here:", err)
			}
			skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
			skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories:\n  - embedded: builtin\ntargets:\n  - dir: "+tc.linked+"\n  - dir: .agents/skills\n  - agents_md: AGENTS.md\n")
			e := homeEngine(t, ws, "skillsync.yaml", home)
			target := e.cfg.Targets[0].Dir
			for round := range 2 {
				rep, err := e.Sync(ctx, SyncOptions{})
				if !errors.Is(err, materialize.ErrTargetLinked) || rep == nil {
					t.Fatalf("round %d: %v, want ErrTargetLinked and a report", round, err)
				}
				want := []string{"target " + target + " ", link + " is a symbolic link", tc.real}
				if tc.real == "" {
					want = append(want, "point the target at "+dest)
				}
				for _, w := range want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("round %d: the error does not say %q: %v", round, w, err)
					}
				}
				if !slices.ContainsFunc(rep.Targets, func(tr materialize.TargetReport) bool {
					return tr.Dir == target && tr.Refused && len(tr.Errors) == 1 && tr.Written == 0 && tr.Removed == 0
				}) {
					t.Errorf("round %d: the report does not mark %s refused: %+v", round, target, rep.Targets)
				}
			}
			for _, p := range []string{".agents/skills/alpha/SKILL.md", ".agents/skills/skillsync/SKILL.md", ".skills-cache/.manifest.json", "skillsync.lock", "AGENTS.md"} {
				if !skilltest.Exists(filepath.Join(ws, p)) {
					t.Errorf("the refused target stopped %s", p)
				}
			}
			if entries, err := os.ReadDir(dest); err != nil || len(entries) != 0 {
				t.Errorf("written through the link into %s: %v %v", dest, entries, err)
			}
			if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link is gone: %v", err)
			}

			st, err := e.Status(ctx, StatusOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if i := slices.IndexFunc(st.Targets, func(ts status.Target) bool { return ts.Dir == target }); i < 0 || st.Targets[i].InSync || !strings.Contains(st.Targets[i].Refused, "symbolic link") {
				t.Errorf("status does not mark the target refused: %+v", st.Targets)
			}
			if a := strings.Join(st.Attention, "\n"); !strings.Contains(a, link+" is a symbolic link") || !strings.Contains(a, tc.real) {
				t.Errorf("status does not name the link: %q", st.Attention)
			}

			res, err := e.Daemon().Sync(ctx, daemon.SyncRequest{})
			if !errors.Is(err, materialize.ErrTargetLinked) || res == nil || !strings.Contains(res.Err, link) || res.Failed() != 0 {
				t.Errorf("the daemon's sync: %+v %v, want a failed target, the sources synced", res, err)
			}
		})
	}
}

// TestLinkedAgentsMDIsRefusedAlone: an AGENTS.md file planted as a link
// out of the workspace is left as it is, refused alone before anything is
// written there, while the targets and the other file are written.
func TestLinkedAgentsMDIsRefusedAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, outside := t.TempDir(), filepath.Join(t.TempDir(), "AGENTS.md")
	skilltest.WriteFile(t, outside, "theirs\n")
	if err := os.Symlink(outside, filepath.Join(ws, "AGENTS.md")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\ntargets:\n  - agents_md: AGENTS.md\n  - dir: .agents/skills\n  - agents_md: docs/AGENTS.md\n")
	e := reload(t, filepath.Join(ws, "skillsync.yaml"))
	rep, err := e.Sync(ctx, SyncOptions{})
	if !errors.Is(err, materialize.ErrOutsideWorkspace) || !strings.Contains(err.Error(), filepath.Join(ws, "AGENTS.md")) || rep == nil {
		t.Fatalf("sync: %v, want the AGENTS.md link refused", err)
	}
	if !slices.ContainsFunc(rep.Targets, func(tr materialize.TargetReport) bool { return tr.Dir == filepath.Join(ws, "AGENTS.md") && tr.Refused }) {
		t.Errorf("the report does not mark AGENTS.md refused: %+v", rep.Targets)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "theirs\n" {
		t.Errorf("written through the link: %q %v", data, err)
	}
	for _, p := range []string{".agents/skills/alpha/SKILL.md", "docs/AGENTS.md", "skillsync.lock"} {
		if !skilltest.Exists(filepath.Join(ws, p)) {
			t.Errorf("the refused file stopped %s", p)
		}
	}
	st, err := e.Status(ctx, StatusOptions{})
	if err != nil || !strings.Contains(strings.Join(st.Attention, "\n"), "agents_md "+filepath.Join(ws, "AGENTS.md")) {
		t.Errorf("status does not name the refused AGENTS.md: %v %q", err, st.Attention)
	}
}

// TestVerifyDoesNotReadThroughALinkedTarget: a target synced, then moved
// into a dotfiles folder and reached through a link (~/.claude), is one
// every sync refuses: verify does not read its record through the link
// and say it matches, it names it as status does, and its copies where
// the link leads are left as they are by a repair.
func TestVerifyDoesNotReadThroughALinkedTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, home := t.TempDir(), t.TempDir()
	skilltest.WriteFile(t, filepath.Join(ws, "skills", "alpha", "SKILL.md"), "---\nname: alpha\ndescription: A skill.\n---\n")
	skilltest.WriteFile(t, filepath.Join(ws, "skillsync.yaml"), "repositories: []\ntargets:\n  - dir: ~/.claude/skills\n  - dir: .agents/skills\n")
	e := homeEngine(t, ws, "skillsync.yaml", home)
	if _, err := e.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	dot := filepath.Join(home, "dot", "claude")
	if err := os.MkdirAll(filepath.Dir(dot), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(home, ".claude"), dot); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dot, filepath.Join(home, ".claude")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	diffs, err := e.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	target := e.cfg.Targets[0].Dir
	if len(diffs) != 1 || diffs[0].Kind != materialize.Unsynced || !strings.HasPrefix(diffs[0].Path, target+" (refused") {
		t.Errorf("verify of a linked target: %+v, want it named refused", diffs)
	}
	skilltest.WriteFile(t, filepath.Join(dot, "skills", "alpha", "SKILL.md"), "edited where the link leads\n")
	if diffs, err := e.Verify(ctx); err != nil || len(diffs) != 1 || diffs[0].Kind != materialize.Unsynced {
		t.Errorf("verify read through the link: %+v %v", diffs, err)
	}
	if _, err := e.Repair(ctx, SyncOptions{}); !errors.Is(err, materialize.ErrTargetLinked) {
		t.Errorf("repair: %v, want the target refused", err)
	}
	if data, err := os.ReadFile(filepath.Join(dot, "skills", "alpha", "SKILL.md")); err != nil || string(data) != "edited where the link leads\n" {
		t.Errorf("repaired through the link: %q %v", data, err)
	}
}
