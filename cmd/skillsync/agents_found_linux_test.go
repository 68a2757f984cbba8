package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
)

// On a terminal init asks which of the agents found to use, all of them
// preselected; the answer picks their folders as targets.
func TestInitAsksOnATerminal(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	run(t, ws, "version") // sets up the environment's home
	for _, d := range []string{".claude", ".codex"} {
		if err := os.MkdirAll(filepath.Join(home(t), d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for answer, want := range map[string][]string{"\n": {".claude/skills", ".agents/skills"}, "2\n": {".agents/skills"}} {
		ctl, tty := openPTY(t)
		if _, err := ctl.WriteString(answer); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := execute(factory{env: hostenv.New(ws, environ(t, nil)), stdin: tty, stdout: &out, stderr: &errb}, []string{"init", "--force"})
		if code != 0 || !strings.Contains(errb.String(), "[x] Claude Code (claude-code)") {
			t.Fatalf("init on a terminal: %d %s %s", code, out.String(), errb.String())
		}
		cfg := readFile(t, filepath.Join(ws, "skillsync.yaml"))
		for _, dir := range []string{".claude/skills", ".agents/skills"} {
			has := strings.Contains(cfg, "  - dir: "+dir+"\n")
			if has != strings.Contains(strings.Join(want, " "), dir) {
				t.Errorf("answer %q: target %s present %v:\n%s", answer, dir, has, out.String())
			}
		}
	}
}
