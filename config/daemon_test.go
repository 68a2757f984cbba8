package config

import (
	"strings"
	"testing"

	"github.com/skillsync/skillsync/repository/all"
)

// TestDaemonListen: daemon.listen is kept as written; one that is not
// host:port or a port is refused with its line.
func TestDaemonListen(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "daemon:\n  listen: 127.0.0.1:9464\n"), all.Kinds())
	if err != nil || cfg.Daemon.Listen != "127.0.0.1:9464" {
		t.Fatalf("listen = %+v, %v", cfg, err)
	}
	if cfg, err := Load(writeConfig(t, "daemon:\n  listen: \"9464\"\n"), all.Kinds()); err != nil || cfg.Daemon.Listen != "9464" {
		t.Errorf("a port alone: %+v, %v", cfg, err)
	}
	if cfg, err := Load(writeConfig(t, "strict: false\n"), all.Kinds()); err != nil || cfg.Daemon.Listen != "" {
		t.Errorf("no daemon block: %+v, %v", cfg, err)
	}
	_, err = Load(writeConfig(t, "workspace: .\ndaemon:\n  listen: a:b:c\n"), all.Kinds())
	if err == nil || !strings.Contains(err.Error(), ":3: daemon: listen \"a:b:c\"") {
		t.Errorf("a bad address: %v", err)
	}
	if _, err := Load(writeConfig(t, "daemon:\n  port: 1\n"), all.Kinds()); err == nil || !strings.Contains(err.Error(), "unknown key \"port\"") {
		t.Errorf("an unknown key: %v", err)
	}
}
