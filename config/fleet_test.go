package config

import (
	"github.com/skillsync/skillsync/repository/all"
	"strings"
	"testing"
	"time"
)

func TestFleetSection(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, `
fleet:
  postgres: SKILLSYNC_FLEET_DSN
  create: true
  host: ci-runner-7
  environment: prod
schedule:
  fleet_push: "@every 1m"
curator:
  min_hosts: 3
`), all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	f := cfg.Fleet
	if f == nil || f.Postgres != "SKILLSYNC_FLEET_DSN" || !f.Create || f.Host != "ci-runner-7" || f.Environment != "prod" ||
		f.Schema != DefaultFleetSchema || f.Push != "@every 1m" || f.MinHosts != 3 || f.Timeout != DefaultFleetTimeout {
		t.Fatalf("fleet: %+v", f)
	}
	cfg, err = Load(writeConfig(t, "fleet:\n  dsn_file: secret/dsn\n  timeout: 3s\n"), all.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(cfg.Fleet.DSNFile, "/secret/dsn") || cfg.Fleet.Push != DefaultFleetPush || cfg.Fleet.MinHosts != DefaultFleetMinHosts || cfg.Fleet.Timeout != 3*time.Second {
		t.Fatalf("fleet: %+v", cfg.Fleet)
	}
	if cfg, err := Load(writeConfig(t, "strict: false\n"), all.Kinds()); err != nil || cfg.Fleet != nil {
		t.Fatalf("no fleet section: %+v %v", cfg, err)
	}
	for text, want := range map[string]string{
		"fleet:\n  schema: x\n":                                      "exactly one of postgres",
		"fleet:\n  postgres: A\n  dsn_file: b\n":                     "exactly one of postgres",
		"fleet:\n  postgres: postgres://u:hunter2@h/db\n":            "not the string itself",
		"fleet:\n  postgres: A\n  host: \"bad\\x1bhost\"\n":          "host",
		"fleet:\n  postgres: A\n  schema: Bad-Name\n":                "schema",
		"fleet:\n  postgres: A\n  environment: \"two words\"\n":      "environment",
		"fleet:\n  postgres: A\nschedule:\n  fleet_push: nonsense\n": "fleet_push",
		"fleet:\n  postgres: A\ncurator:\n  min_hosts: 0\n":          "min_hosts",
		"curator:\n  min_hosts: 2\n":                                 "need a fleet: section",
		"fleet:\n  postgres: A\n  bogus: 1\n":                        "unknown key",
		"fleet:\n  dsn_file: $HOME/dsn\n":                            "dsn_file: path \"$HOME/dsn\" holds a variable",
	} {
		_, err := Load(writeConfig(t, text), all.Kinds())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", text, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows the password: %v", text, err)
		}
	}
}
