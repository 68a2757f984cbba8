package main

import (
	"strings"
	"testing"
)

// cobra's own help and completion commands refuse what they do not know
// with exit 2, as every other command does, and still answer what they
// know.
func TestHelpAndCompletionRefuseUnknownArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args     []string
		code     int
		stdout   string // a line the output holds
		stderror string // a part of the error
	}{
		{[]string{"help", "bogus"}, 2, "", `unknown help topic "bogus"`},
		{[]string{"help", "usage", "bogus"}, 2, "", `unknown help topic "usage bogus"`},
		{[]string{"completion", "tcsh"}, 2, "", `unknown command "tcsh"`},
		{[]string{"help"}, 0, "Available Commands:", ""},
		{[]string{"help", "usage", "import"}, 0, "skillsync usage import [AGENT]", ""},
		{[]string{"completion"}, 0, "Available Commands:", ""},
		{[]string{"completion", "bash"}, 0, "bash completion", ""},
	} {
		r := run(t, dir, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderror) {
			t.Errorf("skillsync %s: exit %d, stdout %.200q, stderr %q; want exit %d, %q in stdout, %q in stderr",
				strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderror)
		}
		if tc.code != 0 && r.stdout != "" {
			t.Errorf("skillsync %s printed %.200q to stdout", strings.Join(tc.args, " "), r.stdout)
		}
	}
}
