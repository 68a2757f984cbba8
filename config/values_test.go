package config

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/repository/all"
)

// TestValueErrorsNameTheLine: every value the config refuses is named
// with the file, the line of its key, the key, and what a right value
// looks like; no message of a config file goes without a line. The keys
// stand below the first line of their sections, so a section's line is
// not taken for theirs.
func TestValueErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       []string // the first after "FILE", the others anywhere
	}{
		{"user with a slash", "strict: true\nuser: a/b\n", []string{`:2: user "a/b" is not one folder name`, "such as alice"}},
		{"user ..", "strict: true\n\nuser: \"..\"\n", []string{`:3: user ".." is not one folder name`, "such as alice"}},
		{"negative max_file_size", "strict: true\nmax_file_size: -1\n", []string{":2: max_file_size -1: a limit is a positive number of bytes", "such as 10485760 (10 MiB, the default)"}},
		{"zero max_skill_size", "strict: true\nmax_skill_size: 0\n", []string{":2: max_skill_size 0:", "such as 67108864 (64 MiB, the default)"}},
		{"zero max_source_size", "strict: true\nmax_source_size: 0\n", []string{":2: max_source_size 0:", "such as 1073741824 (1 GiB, the default)"}},
		{"zero max_fetch_size", "strict: true\nmax_fetch_size: 0\n", []string{":2: max_fetch_size 0:", "such as 1073741824 (1 GiB, the default)"}},
		{"max_file_size with a unit", "strict: true\nmax_file_size: 10MB\n", []string{`:2: key "max_file_size" in the config: "10MB" is not a whole number; max_file_size is a positive number of bytes, such as 10485760`}},
		{"max_file_size a fraction", "strict: true\nmax_file_size: 1.5\n", []string{`:2: key "max_file_size" in the config: "1.5" is not a whole number; max_file_size is a positive number of bytes`}},
		{"max_file_size too large", "strict: true\nmax_file_size: 99999999999999999999\n", []string{`:2: key "max_file_size" in the config:`, "is too large a number here", "such as 10485760"}},
		{"depth in quotes", "repositories:\n  - name: x\n    git: https://example.com/x\n    depth: \"1\"\n", []string{`:4: key "depth" in repositories[0]: "1" is a string, not a number: write depth: 1 without quotes`}},
		{"max_file_size in quotes", "strict: true\nmax_file_size: '10'\n", []string{`:2: key "max_file_size" in the config: "10" is a string, not a number: write max_file_size: 10 without quotes`}},
		{"max_file_size far below zero", "strict: true\nmax_file_size: -99999999999999999999\n", []string{`:2: key "max_file_size" in the config: "-99999999999999999999" is too small a number here`}},
		{"zero max_entries", "strict: true\nmax_entries: 0\n", []string{":2: max_entries 0: a limit is a positive number of directory entries, such as 100000 (the default)"}},
		{"negative max_entries", "strict: true\nmax_entries: -5\n", []string{":2: max_entries -5:", "such as 100000"}},
		{"max_entries a fraction", "strict: true\nmax_entries: 1.5\n", []string{`:2: key "max_entries" in the config: "1.5" is not a whole number; max_entries is a positive number of directory entries, such as 100000`}},
		{"max_entries a word", "strict: true\nmax_entries: many\n", []string{`:2: key "max_entries" in the config: "many" is not a whole number; max_entries is a positive number of directory entries`}},
		{"variable in global", "strict: true\nglobal: $HOME/g\n", []string{`:2: global: path "$HOME/g" holds a variable`, "write the folder in full"}},
		{"workspace is a file", "strict: true\nworkspace: skillsync.yaml\n", []string{":2: workspace ", "is not a directory: name a folder"}},
		{"default_git_host not https", "strict: true\ndefault_git_host: \"ftp://git.example.com\"\n", []string{`:2: default_git_host "ftp://git.example.com": want a host, such as github.com`}},
		{"stale_after negative", "curator:\n  layers: [workspace]\n  stale_after: -1h\n", []string{":3: curator: stale_after -1h0m0s: write a positive duration, such as 720h"}},
		{"archive_after zero", "curator:\n  layers: [workspace]\n  archive_after: 0s\n", []string{":3: curator: archive_after 0s: write a positive duration, such as 2160h"}},
		{"min_idle negative", "curator:\n  layers: [workspace]\n  min_idle: -1m\n", []string{":3: curator: min_idle -1m0s: write a duration of 0 (no wait) or more"}},
		{"archive_after shorter", "curator:\n  layers: [workspace]\n  stale_after: 48h\n  archive_after: 24h\n", []string{":4: curator: archive_after (24h0m0s) is shorter than stale_after (48h0m0s)", "make archive_after the longer"}},
		{"stale_after past the default archive_after", "curator:\n  layers: [workspace]\n  stale_after: 9000h\n", []string{":3: curator: archive_after (2160h0m0s) is shorter than stale_after"}},
		{"curated layer", "curator:\n  min_idle: 1h\n  layers: [nope]\n", []string{`:3: curator: layer "nope": use workspace, user or marketplace`}},
		{"stat_check_every negative", "schedule:\n  sync: \"@every 1m\"\n  stat_check_every: -1\n", []string{":3: schedule: stat_check_every -1: write 0 (never) or a count of syncs, such as 96"}},
		{"stat_check_every a fraction", "schedule:\n  sync: \"@every 1m\"\n  stat_check_every: 2.5\n", []string{`:3: key "stat_check_every" in schedule: "2.5" is not a whole number`}},
		{"schedule that does not parse", "schedule:\n  sync: \"@every 1m\"\n  curate: sometimes\n", []string{`:3: schedule.curate "sometimes" does not parse`}},
		{"listen", "daemon:\n\n  listen: \"a:b:c\"\n", []string{`:3: daemon: listen "a:b:c" is not host:port or a port, such as 127.0.0.1:9090`}},
		{"empty approver", "promotion:\n  auto: false\n  approvers: [\"\"]\n", []string{":3: promotion: an approver is empty"}},
		{"promotion target", "promotion:\n  auto: false\n  targets: [nowhere]\n", []string{`:3: promotion: target "nowhere" is not workspace, user or the name of a source`}},
		{"fleet timeout", "fleet:\n  postgres: A\n  timeout: -1s\n", []string{":3: fleet: timeout -1s: write a positive duration, such as 10s"}},
		{"fleet schema", "fleet:\n  postgres: A\n  schema: Bad-Name\n", []string{`:3: fleet: schema "Bad-Name"`, "such as skillsync_fleet"}},
		{"fleet environment", "fleet:\n  postgres: A\n  environment: \"two words\"\n", []string{`:3: fleet: environment "two words"`, "such as prod"}},
		{"fleet min_hosts", "fleet:\n  postgres: A\ncurator:\n  min_idle: 1h\n  min_hosts: 0\n", []string{":5: curator: min_hosts 0: write 1 or more, such as 2"}},
		{"fleet_push without a fleet", "schedule:\n  sync: \"@every 1m\"\n  fleet_push: \"@every 1m\"\n", []string{":3: schedule.fleet_push and curator.min_hosts need a fleet: section"}},
		{"fleet_push", "fleet:\n  postgres: A\nschedule:\n  sync: \"@every 1m\"\n  fleet_push: nonsense\n", []string{`:5: schedule.fleet_push "nonsense" does not parse`}},
		{"source timeout", "repositories:\n  - dir: x\n    timeout: -1s\n", []string{":2: repositories[0]: timeout -1s: write a positive duration, such as 60s"}},
		{"git depth a fraction", "repositories:\n  - git: file:///x\n    depth: 1.5\n", []string{`:3: key "depth" in repositories[0]: "1.5" is not a whole number`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			_, err := Load(path, all.Kinds())
			checkLined(t, path, err, tt.want)
		})
	}
}

// TestWithoutAHomeErrorsNameTheLine: a folder below ~ where there is no
// home directory is named with its line.
func TestWithoutAHomeErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"global", "strict: true\nglobal: ~/g\n", []string{`:2: global "~/g" is below the home directory, and there is none here`}},
		{"workspace", "strict: true\nworkspace: ~/w\n", []string{`:2: workspace "~/w" is below the home directory`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			_, err := LoadIn(hostenv.New(filepath.Dir(path), []string{"XDG_CONFIG_HOME=" + t.TempDir()}), path, all.Kinds())
			checkLined(t, path, err, tt.want)
		})
	}
}

// lineOfFile is how every message of a config error starts: the file, a
// line number and the message.
var lineOfFile = regexp.MustCompile(`^(.+):(\d+): `)

// checkLined checks err is a config error of the file at path whose
// every message names a line, the first of want after the file name and
// the others anywhere.
func checkLined(t *testing.T, path string, err error, want []string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, path+want[0]) {
		t.Errorf("error %q does not say %q", msg, path+want[0])
	}
	for _, w := range want[1:] {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	for _, line := range strings.Split(msg, "\n") {
		if m := lineOfFile.FindStringSubmatch(line); m == nil || m[1] != path || m[2] == "0" {
			t.Errorf("message %q does not name the file and a line", line)
		}
	}
}

// TestErrorMessageWithoutALine: a message whose line is unknown (0) names
// the file alone, never a line 0.
func TestErrorMessageWithoutALine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ msg, want string }{
		{"line 3: user \"a/b\"", "/c/skillsync.yaml:3: user \"a/b\""},
		{"line 0: workspace x", "/c/skillsync.yaml: workspace x"},
		{"the file is empty", "/c/skillsync.yaml: the file is empty"},
	} {
		if got := (&Error{File: "/c/skillsync.yaml", Errs: []error{errors.New(tt.msg)}}).Error(); got != tt.want {
			t.Errorf("%q: Error() = %q, want %q", tt.msg, got, tt.want)
		}
	}
}
