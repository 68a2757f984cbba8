package startheap

import "testing"

// The command is the first argument that is neither a flag nor the
// value of a global flag given apart from it.
func TestCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sync"}, "sync"},
		{[]string{"sync", "--json"}, "sync"},
		{[]string{"-q", "--json", "-g", "fetch"}, "fetch"},
		{[]string{"-qg", "update", "--all"}, "update"},
		{[]string{"--config", "team.yaml", "verify"}, "verify"},
		{[]string{"--config=team.yaml", "sync"}, "sync"},
		{[]string{"--log-format", "json", "sync"}, "sync"},
		{[]string{"--config", "sync", "list"}, "list"},
		{[]string{"--", "sync"}, ""},
		{[]string{"--"}, ""},
		{[]string{"--config"}, ""},
		{[]string{"--json"}, ""},
		{nil, ""},
		{[]string{"list", "sync"}, "list"},
		{[]string{"", "sync"}, ""},
	} {
		if got := Command(tc.args); got != tc.want {
			t.Errorf("Command(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestBig(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]bool{
		"fetch": true, "sync": true, "update": true, "verify": true,
		"list": false, "prompt": false, "daemon": false, "serve": false, "": false, "Sync": false,
	} {
		if Big(cmd) != want {
			t.Errorf("Big(%q) = %v, want %v", cmd, !want, want)
		}
	}
}

// A range is mapped ahead for huge pages only where the system gives
// them on advice and does not count untouched memory against a limit,
// and never more than an eighth of the machine's memory.
func TestRoom(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	for _, tc := range []struct {
		name       string
		onAdvice   bool
		overcommit string
		capped     bool
		memory     uint64
		want       int
	}{
		{"on advice", true, "0\n", false, 24 * gib, Range},
		{"no advice wanted", false, "0\n", false, 24 * gib, 0},
		{"no overcommit", true, "2\n", false, 24 * gib, 0},
		{"always overcommit", true, "1\n", false, 24 * gib, Range},
		{"overcommit unknown", true, "", false, 24 * gib, 0},
		{"an address space or data cap", true, "0\n", true, 24 * gib, 0},
		{"a small machine", true, "0\n", false, gib, gib / 8},
	} {
		if got := room(Range, tc.onAdvice, tc.overcommit, tc.capped, tc.memory); got != tc.want {
			t.Errorf("%s: room = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := room(0, true, "0\n", false, 24*gib); got != 0 {
		t.Errorf("room for nothing = %d", got)
	}
}
