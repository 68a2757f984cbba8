package config

import (
	"testing"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/repository/all"
)

// TestNoTargetMark: the starter marked by init --agent none loads with
// NoTarget, so add does not look for agents; an unmarked one, or one
// whose targets: has entries since, does not.
func TestNoTargetMark(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       bool
	}{
		{"marked", MarkNoTarget(Starter), true},
		{"the starter", Starter, false},
		{"a target added below the mark", "targets:   # " + NoTargetComment + "\n  - dir: x\n", false},
	} {
		cfg, err := LoadIn(hostenv.Env{}, writeConfig(t, tt.text), all.Kinds())
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if cfg.NoTarget != tt.want {
			t.Errorf("%s: NoTarget %v, want %v", tt.name, cfg.NoTarget, tt.want)
		}
	}
	if MarkNoTarget(Starter) == Starter {
		t.Error("the starter has no targets: [] line to mark")
	}
}
